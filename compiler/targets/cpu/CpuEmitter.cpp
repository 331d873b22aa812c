//===- CpuEmitter.cpp - The C++ file: class, state, metadata, main() ------===//
#include "compiler/targets/cpu/CpuEmitter.h"
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "compiler/targets/common/EmitModel.h"
#include "dialects/Kernel/KernelOps.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;
using ampc::cpu_emit::kCpuSyntax;

namespace {

// Helpers every generated file starts with: the rounding at op boundaries
// and the scalar formulas the fused loops share with the kernel library.
constexpr const char *kPreamble = R"cpp(#include "runtime/Model.h"
#include "runtime/cpu/Epilogue.h"
#include "runtime/cpu/Kernels.h"
#include "runtime/numerics/Activation.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"
#include "runtime/numerics/Scaler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <vector>

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

// The host model's FP32 master of parameter k (bindGradArguments).
std::string hostWeight(size_t k) {
  return "w_[" + std::to_string(k) + "].data()";
}

} // namespace

namespace {

class FileEmitter {
public:
  FileEmitter(Program &p, raw_ostream &out, AsmState &state)
      : p(p), os(out), state(state) {}

  LogicalResult emit() {
    std::string cls = className(p.model.getSymName());
    kernels = libraryKernels(p);
    emitFileHeader(os, p, kCpuSyntax);
    os << kPreamble << kPreambleEnd;
    os << "class " << cls << " final : public ampc::rt::Model {\n";
    os << "public:\n";
    os.indent();
    emitConstructor(cls);
    emitMetadataAccessors(os);
    emitDefaults(os, p);
    emitInitialize();
    if (failed(emitForwardBackward()))
      return failure();
    os << "float *grad(int param) override { return g_[param].data(); }\n";
    os << "float *lossAccumulator() override { return &lossAccumulator_; }\n";
    os << "void beginStep(int64_t iteration) { iteration_ = iteration; }\n";
    os << "void setDataShard(int rank, int) override { shard_ = rank; }\n\n";
    if (failed(cpu_emit::emitStep(p, os)))
      return failure();
    os << "\n";
    if (failed(emitEvaluate()))
      return failure();
    emitState();
    os.unindent();
    emitMembers();
    emitClassEndAndMain(os, cls);
    return success();
  }

private:
  Program &p;
  raw_indented_ostream os;
  AsmState &state;

  size_t numParams() const { return p.paramNames.size(); }
  bool sgd() const { return p.epilogue.getOptimizer() == "sgd"; }

  void emitConstructor(const std::string &cls) {
    os << cls << "() {\n";
    os.indent();
    os << "// Initializers resolved against each shape (fans, gains).\n";
    size_t i = 0;
    for (auto param : p.model.getBlock().getOps<graph::ParamOp>()) {
      auto t = cast<RankedTensorType>(param.getType());
      os << "addParam(" << quoted(param.getName()) << ", "
         << shapeList(t.getShape()) << ", " << initAttrs(param.getInit())
         << ");  // w_[" << i++ << "]\n";
    }
    int64_t arena =
        std::max(arenaSize(p.grad), arenaSize(p.model.getOperation()));
    auto noReuse = [](Operation *op) {
      auto a = op->getAttrOfType<IntegerAttr>(kernel::kArenaNoReuseAttr);
      return a ? a.getInt() : 0;
    };
    os << "// One arena for every intermediate tensor: " << arena
       << " bytes (" << std::max(noReuse(p.grad), noReuse(p.model))
       << " without reuse).\n";
    os << "arenaStorage_.resize(" << arena << " + 64);\n";
    os << "arena_ = reinterpret_cast<std::byte *>((reinterpret_cast<uintptr_t>("
          "arenaStorage_.data()) + 63) & ~uintptr_t(63));\n";
    os.unindent();
    os << "}\n\n";
  }

  void emitInitialize() {
    bool none = p.epilogue.getLossScale() == "none";
    os << "void initialize(uint64_t seed, const ampc::rt::Hyper &hyper) "
          "override {\n";
    os.indent();
    os << "seed_ = seed;\n"
       << "for (int p = 0; p < kNumParams; ++p) {\n"
       << "  ampc::num::fillInit(params_[p].init, seed, "
          "ampc::num::streamId(params_[p].name), w_[p]);\n"
       << "  std::fill(g_[p].begin(), g_[p].end(), 0.0f);\n"
       << "  std::fill(m_[p].begin(), m_[p].end(), 0.0f);\n";
    if (!sgd())
      os << "  std::fill(v_[p].begin(), v_[p].end(), 0.0f);\n";
    os << "}\n"
       << "step_ = 0;\n"
       << "iteration_ = 0;\n"
       << "lossAccumulator_ = 0.0f;\n"
       << "scaler_ = ampc::rt::ScalerState{};\n"
       << "scaler_.scale = " << (none ? "1.0f;  // no loss scaling" : "hyper.initScale;")
       << "\n"
       << "scaler_.hysteresisLeft = hyper.hysteresis;\n";
    os.unindent();
    os << "}\n\n";
  }

  LogicalResult emitForwardBackward() {
    BlockEnv env;
    env.asmState = &state;
    env.training = true;
    env.dropoutStep = "int64_t(iteration_ * " + std::to_string(accumSteps(p)) +
                      " + micro)";
    reserve(env);
    func::FuncOp fn = p.grad;
    os << "// @" << fn.getSymName()
       << ": forward and backward of one micro-batch; gradients of loss * "
          "scale.\n";
    os << "void forwardBackward(const void *const *inputs, int micro) "
          "override {\n";
    os.indent();
    os << "std::byte *arena = arena_;\n";
    os << "float lossScale = scaler_.scale;\n";
    auto input = [&](const std::string &name, const std::string &type,
                     int index, Value) {
      os << type << " *" << name << " = input<" << type << ">(inputs["
         << index << "]);\n";
    };
    if (failed(bindGradArguments(p, env, os, kCpuSyntax, hostWeight,
                                 "(&lossScale)", input)))
      return failure();
    os << "\n";
    if (failed(cpu_emit::emitBlock(fn.getBody().front(), env, os)))
      return failure();
    os << "\n// Results: the loss (summed over micro-batches), gradients "
          "written or accumulated.\n";
    auto loss = [&](Value v) {
      os << "lossAccumulator_ += float(" << env[v] << "[0]);\n";
    };
    auto grad = [&](Value v, size_t idx, int64_t count, StringRef name) {
      os << "accumulate(g_[" << idx << "].data(), " << env[v] << ", " << count
         << ", micro);  // " << name << "\n";
    };
    if (failed(forEachGradResult(p, loss, grad)))
      return failure();
    os.unindent();
    os << "}\n\n";
    return success();
  }

  LogicalResult emitEvaluate() {
    BlockEnv env;
    env.asmState = &state;
    env.training = false;
    reserve(env);
    os << "// @" << p.model.getSymName() << ": the forward pass (dropout off).\n";
    os << "void evaluate(const void *const *inputs, void *const *outputs) "
          "override {\n";
    os.indent();
    os << "std::byte *arena = arena_;\n";
    bindModelValues(p, env, os, kCpuSyntax, hostWeight,
                    [&](const std::string &name, const std::string &type,
                        int index, Value) {
                      os << type << " *" << name << " = input<" << type
                         << ">(inputs[" << index << "]);\n";
                    });
    os << "\n";
    if (failed(cpu_emit::emitBlock(p.model.getBlock(), env, os)))
      return failure();
    os << "\n";
    graph::OutputOp out = p.model.getOutputOp();
    for (auto [i, v] : llvm::enumerate(out.getValues()))
      os << "std::memcpy(outputs[" << i << "], " << env[v] << ", "
         << byteSize(v.getType()) << ");  // "
         << cast<StringAttr>(out.getNames()[i]).getValue() << "\n";
    os.unindent();
    os << "}\n\n";
    return success();
  }

  void emitState() {
    os << "std::vector<ampc::rt::StateTensor> stateTensors() override {\n";
    os.indent();
    os << "std::vector<ampc::rt::StateTensor> s;\n"
       << "for (int p = 0; p < kNumParams; ++p) {\n"
       << "  const std::string &n = params_[p].name;\n"
       << "  const std::vector<int64_t> &shape = params_[p].shape;\n"
       << "  s.push_back({n, shape, w_[p].data()});\n";
    if (sgd())
      os << "  s.push_back({n + \".momentum_buffer\", shape, m_[p].data()});\n";
    else
      os << "  s.push_back({n + \".exp_avg\", shape, m_[p].data()});\n"
         << "  s.push_back({n + \".exp_avg_sq\", shape, v_[p].data()});\n";
    os << "}\nreturn s;\n";
    os.unindent();
    os << "}\n"
       << "ampc::rt::ScalerState &scaler() override { return scaler_; }\n"
       << "int64_t &optimizerStep() override { return step_; }\n\n";
  }

  void emitMembers() {
    os << "private:\n";
    os.indent();
    os << "static constexpr int kNumParams = " << numParams() << ";\n\n";
    os << "void addParam(std::string name, std::vector<int64_t> shape, "
          "const ampc::num::InitAttrs &init) {\n"
       << "  int64_t n = 1;\n"
       << "  for (int64_t d : shape)\n"
       << "    n *= d;\n"
       << "  int p = int(params_.size());\n"
       << "  ampc::num::InitSpec spec = ampc::num::resolveInit(init, shape);\n"
       << "  params_.push_back({std::move(name), std::move(shape), spec});\n"
       << "  w_[p].assign(n, 0.0f);\n"
       << "  g_[p].assign(n, 0.0f);\n"
       << "  m_[p].assign(n, 0.0f);\n"
       << (sgd() ? "" : "  v_[p].assign(n, 0.0f);\n") << "}\n\n";
    os << "// Gradients: written by micro-batch 0, accumulated by the others.\n"
       << "static void accumulate(float *g, const float *x, int64_t n, int "
          "micro) {\n"
       << "  if (micro == 0)\n"
       << "    std::memcpy(g, x, size_t(n) * sizeof(float));\n"
       << "  else\n"
       << "    for (int64_t i = 0; i < n; ++i)\n"
       << "      g[i] += x[i];\n"
       << "}\n\n";

    emitTensorInfos(os, p);
    os << "std::vector<ampc::rt::ParamInfo> params_;\n";
    emitCompileConfig(os, p, kCpuSyntax);
    os << "\n// FP32 master weights, gradients, optimizer moments.\n";
    os << "std::vector<float> w_[kNumParams], g_[kNumParams], m_[kNumParams]"
       << (sgd() ? "" : ", v_[kNumParams]") << ";\n";
    os << "int64_t step_ = 0;       // optimizer steps taken (not skipped ones)\n"
       << "int64_t iteration_ = 0;  // steps begun, skipped ones included\n"
       << "uint64_t seed_ = 0;\n"
       << "int64_t shard_ = 0;      // data-parallel rank (dropout masks)\n"
       << "float lossAccumulator_ = 0.0f;\n"
       << "ampc::rt::ScalerState scaler_;\n"
       << "std::vector<std::byte> arenaStorage_;\n"
       << "std::byte *arena_ = nullptr;\n";
    emitKernelMembers(os, kernels, kCpuSyntax);
    os.unindent();
  }

  // Names that generated locals must not take.
  void reserve(BlockEnv &env) {
    for (StringRef n : {"arena", "inputs", "outputs", "micro", "lossScale",
                        "in", "out", "attrs", "i"})
      env.used.insert(n);
  }

  llvm::SetVector<StringRef> kernels;
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
