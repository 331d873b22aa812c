//===- CpuEmitter.cpp - The C++ file: the model's subclass and main() -----===//
//
// Prints only what depends on the model: its ModelSpec, the bodies of one
// micro-batch's forward + backward and of the forward alone, the kernel
// members. Storage, initialization, gradient accumulation, the epilogue and
// the checkpointed state are ampc::cpu::HostModel's (runtime/cpu/HostModel.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cpu/CpuEmitter.h"
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "compiler/targets/common/EmitGradResults.h"
#include "compiler/targets/common/EmitModel.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;
using ampc::cpu_emit::kCpuSyntax;

namespace {

// Helpers every generated file starts with: the rounding at op boundaries
// and the scalar formulas the fused loops share with the kernel library.
constexpr const char *kPreamble = R"cpp(#include "runtime/cpu/GeneratedPrelude.h"

namespace {

using ampc::cpu::TensorRef;
using ampc::num::bf16;
using ampc::num::half;
using ampc::rt::DType;

// Rounds a float to T and back: the boundary of every op in a fused loop,
// so fusion does not change the numbers.
template <typename T> inline float round(float x) { return float(T(x)); }
template <> inline float round<float>(float x) { return x; }

)cpp";

constexpr const char *kPreambleEnd = R"cpp(
ampc::cpu::Kernel kernel(const char *name) {
  ampc::cpu::Kernel k = ampc::cpu::lookup(name);
  if (!k) {
    std::fprintf(stderr, "error: the CPU kernel library has no %s\n", name);
    std::exit(1);
  }
  return k;
}

// Calls a library kernel on arrays of operand and result references.
template <size_t N, size_t M>
void call(ampc::cpu::Kernel k, const TensorRef (&in)[N],
          const TensorRef (&out)[M], const ampc::cpu::Attrs &attrs) {
  k(std::span<const TensorRef>(in, N), std::span<const TensorRef>(out, M),
    attrs);
}

template <typename T> T *input(const void *p) {
  return static_cast<T *>(const_cast<void *>(p));
}

)cpp";

} // namespace

namespace {

class FileEmitter {
public:
  FileEmitter(Program &p, raw_ostream &out, AsmState &state)
      : p(p), os(out), state(state) {}

  LogicalResult emit() {
    if (failed(checkEpilogue()))
      return failure();
    std::string cls = className(p.model.getSymName());
    kernels = libraryKernels(p);
    emitFileHeader(os, p, kCpuSyntax);
    os << kPreamble << kPreambleEnd;
    os << "class " << cls << " final : public ampc::cpu::HostModel {\n";
    os << "public:\n";
    os.indent();
    os << cls << "() : HostModel(spec()) {}\n\n";
    os.unindent();
    os << "private:\n";
    os.indent();
    if (failed(emitForwardBackward()) || failed(emitEvaluate()))
      return failure();
    emitModelSpec(os, p, kCpuSyntax);
    emitKernelMembers(os, kernels, kCpuSyntax);
    emitAttrMembers(os, attrMembers, kCpuSyntax);
    os.unindent();
    // Before the model allocates anything: it may start the binary again
    // (runtime/cpu/BlasCore.h).
    emitClassEndAndMain(os, cls, "ampc::cpu::useFastBlasKernels(argv);");
    return success();
  }

private:
  Program &p;
  raw_indented_ostream os;
  AsmState &state;
  llvm::SetVector<StringRef> kernels;
  AttrMembers attrMembers;

  // HostModel runs cpu::Epilogue over every parameter, configured by
  // train.config (which train.fused_epilogue reads too).
  LogicalResult checkEpilogue() {
    train::FusedEpilogueOp e = p.epilogue;
    size_t n = p.paramNames.size();
    if (e.getParams().size() != n)
      return e.emitOpError() << "updates " << e.getParams().size()
                             << " parameters; the model has " << n;
    return success();
  }

  // `T *name = input<T>(inputs[index]);`
  static std::string inputPointer(const std::string &name,
                                  const std::string &type, int index) {
    return type + " *" + name + " = input<" + type + ">(inputs[" +
           std::to_string(index) + "]);\n";
  }

  LogicalResult emitForwardBackward() {
    BlockEnv env;
    env.asmState = &state;
    env.attrMembers = &attrMembers;
    env.training = true;
    env.dropoutStep = "int64_t(iteration() * " +
                      std::to_string(accumSteps(p)) + " + micro)";
    reserve(env);
    func::FuncOp fn = p.grad;
    os << "// @" << commentText(fn.getSymName())
       << ": forward and backward of one micro-batch; gradients of loss * "
          "scale.\n";
    os << "void runForwardBackward(const void *const *inputs, int micro) "
          "override {\n";
    os.indent();
    os << "std::byte *arena = this->arena();\n";
    os << "float scale = lossScale();  // the kernels take it by address\n";
    auto input = [&](const std::string &name, const std::string &type,
                     int index, Value) { os << inputPointer(name, type, index); };
    if (failed(bindGradArguments(p, env, os, kCpuSyntax, "(&scale)",
                                 input)))
      return failure();
    os << "\n";
    bindGradsInPlace(p, env);
    if (failed(emitGradBodyAndResults(
            p, env, os,
            [&] { return cpu_emit::emitBlock(fn.getBody().front(), env, os); },
            "// Results: the loss (summed over micro-batches); the gradients "
            "were stored above.",
            [&](Value v) {
              os << "addLoss(float(" << env[v] << "[0]));\n";
            })))
      return failure();
    os.unindent();
    os << "}\n\n";
    return success();
  }

  LogicalResult emitEvaluate() {
    BlockEnv env;
    env.asmState = &state;
    env.attrMembers = &attrMembers;
    env.training = false;
    reserve(env);
    os << "// @" << commentText(p.model.getSymName())
       << ": the forward pass (dropout off).\n";
    os << "void runEvaluate(const void *const *inputs, void *const *outputs) "
          "override {\n";
    os.indent();
    os << "std::byte *arena = this->arena();\n";
    bindModelValues(p, env, os, kCpuSyntax,
                    [&](const std::string &name, const std::string &type,
                        int index, Value) {
                      os << inputPointer(name, type, index);
                    });
    os << "\n";
    if (failed(cpu_emit::emitBlock(p.model.getBlock(), env, os)))
      return failure();
    os << "\n";
    graph::OutputOp out = p.model.getOutputOp();
    for (auto [i, v] : llvm::enumerate(out.getValues()))
      os << "std::memcpy(outputs[" << i << "], " << env[v] << ", "
         << byteSize(v.getType()) << ");  // "
         << commentText(cast<StringAttr>(out.getNames()[i]).getValue()) << "\n";
    os.unindent();
    os << "}\n\n";
    return success();
  }

  // Names that generated locals must not take.
  void reserve(BlockEnv &env) {
    for (StringRef n : {"arena", "inputs", "outputs", "micro", "scale", "in",
                        "out", "attrs", "i", "grad", "halfGrad", "gradReady"})
      env.used.insert(n);
  }
};

} // namespace

LogicalResult ampc::emitCpuTrainingProgram(ModuleOp module, raw_ostream &os) {
  Program p;
  if (failed(collect(module, p)))
    return failure();
  AsmState state(module);
  FileEmitter emitter(p, os, state);
  return emitter.emit();
}
