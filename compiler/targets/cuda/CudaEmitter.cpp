//===- CudaEmitter.cpp - The .cu file: kernels, bodies, main() ------------===//
//
// The generated class derives from ampc::cuda::DeviceModel (runtime/cuda/
// DeviceModel.h), which owns everything that does not depend on the model:
// device storage, input staging, CUDA-graph capture and replay, the fused
// epilogue, checkpoints. This file prints only what the model decides: the
// fused kernels, the constants, the ModelSpec, the bodies of
// runForwardBackward() (@<m>_grad) and runEvaluate() (the model), the
// kernel-library members and main().
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cuda/CudaEmitter.h"
#include "compiler/targets/common/EmitGradResults.h"
#include "compiler/targets/common/EmitModel.h"
#include "compiler/targets/cuda/CudaEmitterImpl.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;
using namespace ampc::cuda_emit;

namespace {

// What the shared block printers need besides DeviceModel: rnd<T> and Pack
// for fused kernels, fill for splat constants (launched from generated code,
// so defined in it).
constexpr const char *kPreamble = R"cpp(#include "runtime/cuda/DeviceModel.h"
#include "runtime/numerics/Elementwise.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using ampc::cuda::check;
using ampc::cuda::TensorRef;
using ampc::rt::DType;

// Rounds a float to T and back: the boundary of every op in a fused kernel.
template <typename T> __device__ __forceinline__ float rnd(float x) {
  return float(T(x));
}
template <> __device__ __forceinline__ float rnd<float>(float x) { return x; }

// N consecutive elements, aligned to their size: a fused kernel's 16-byte
// (or wider) vector load or store. Only on pointers known to be aligned.
template <class T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename T> __global__ void fill(T *p, int64_t n, T v) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

)cpp";

class FileEmitter {
public:
  FileEmitter(Program &p, raw_ostream &out, AsmState &state)
      : p(p), out(out), state(state) {}

  LogicalResult emit() {
    std::string cls = className(p.model.getSymName());
    bool hasDropout = false;
    p.model.walk([&](graph::DropoutOp) { hasDropout = true; });
    p.grad.walk([&](graph::DropoutOp) { hasDropout = true; });

    // Bodies first: they collect the kernels and constants printed above
    // the class.
    std::string fb, eval;
    if (failed(printBody(fb, [&](raw_indented_ostream &os) {
          return emitForwardBackward(os);
        })))
      return failure();
    gradLaunches.assign(parts.launched.begin(), parts.launched.end());
    if (failed(printBody(
            eval, [&](raw_indented_ostream &os) { return emitEvaluate(os); })))
      return failure();

    emitFileHeader(out, p, kCudaSyntax);
    out << kPreamble;
    out << "// Fused elementwise kernels (kernel.fused_elementwise).\n"
        << parts.kernels;
    if (!parts.constants.empty())
      out << "// Non-splat constants, copied to the device once.\n";
    for (auto [i, c] : llvm::enumerate(parts.constants))
      out << "const " << c.type << " kConstant" << i << "[] = " << c.values
          << ";\n";
    out << (parts.constants.empty() ? "" : "\n") << "class " << cls
        << " final : public ampc::cuda::DeviceModel {\npublic:\n";
    raw_indented_ostream os(out);
    os.indent();
    os << cls << "() : DeviceModel(spec(), {";
    for (auto [i, c] : llvm::enumerate(parts.constants))
      os << (i ? ", " : "") << "{kConstant" << i << ", " << c.bytes << "}";
    os << "}, /*dropout=*/" << (hasDropout ? "true" : "false") << ") {}\n\n";
    os.unindent();
    os << "private:\n";
    os.indent();
    emitModelSpec(os, p, kCudaSyntax);
    os << "\n" << fb << "\n" << eval;
    emitKernelMembers(os, libraryKernels(p), kCudaSyntax);
    emitAttrMembers(os, attrMembers, kCudaSyntax);
    os.unindent();
    emitClassEndAndMain(os, cls);
    return success();
  }

  // The fused kernels the training step's body launches, in order (after
  // emit()).
  std::vector<std::string> gradLaunches;

private:
  Program &p;
  raw_ostream &out;
  AsmState &state;
  FileParts parts;
  AttrMembers attrMembers;

  // Prints |body| into |text| (indented with the class when copied out).
  static LogicalResult
  printBody(std::string &text,
            llvm::function_ref<LogicalResult(raw_indented_ostream &)> body) {
    llvm::raw_string_ostream s(text);
    raw_indented_ostream os(s);
    return body(os);
  }

  LogicalResult emitForwardBackward(raw_indented_ostream &os) {
    BlockEnv env;
    env.asmState = &state;
    env.attrMembers = &attrMembers;
    env.training = true;
    env.dropoutStep =
        "int64_t(iteration() * " + std::to_string(accumSteps(p)) + " + micro)";
    reserve(env);
    func::FuncOp fn = p.grad;
    os << "// @" << commentText(fn.getSymName())
       << ": forward and backward of one micro-batch (captured once per "
          "micro == 0 / micro > 0).\n";
    os << "void runForwardBackward(int micro) override {\n";
    os.indent();
    os << "std::byte *arena = this->arena();\n";
    // The scale lives on the device: the graph reads the current one.
    if (failed(bindGradArguments(
            p, env, os, kCudaSyntax, "lossScale()",
            [&](const std::string &name, const std::string &type, int index,
                Value) { bindInput(os, name, type, index); })))
      return failure();
    os << "\n";
    bindGradsInPlace(p, env);
    if (failed(emitGradBodyAndResults(
            p, env, os,
            [&] {
              return emitCudaBlock(fn.getBody().front(), env, parts, os);
            },
            "// Results: the loss joins the device accumulator; the gradients "
            "were stored above.",
            [&](Value v) { os << "addLoss(" << env[v] << ");\n"; })))
      return failure();
    os.unindent();
    os << "}\n";
    return success();
  }

  LogicalResult emitEvaluate(raw_indented_ostream &os) {
    BlockEnv env;
    env.asmState = &state;
    env.attrMembers = &attrMembers;
    env.training = false;
    reserve(env);
    os << "// @" << commentText(p.model.getSymName())
       << ": the forward pass (dropout off), eager.\n";
    os << "void runEvaluate(const void **outputs) override {\n";
    os.indent();
    os << "std::byte *arena = this->arena();\n";
    bindModelValues(p, env, os, kCudaSyntax,
                    [&](const std::string &name, const std::string &type,
                        int index,
                        Value) { bindInput(os, name, type, index); });
    os << "\n";
    if (failed(emitCudaBlock(p.model.getBlock(), env, parts, os)))
      return failure();
    os << "\n";
    graph::OutputOp o = p.model.getOutputOp();
    for (auto [i, v] : llvm::enumerate(o.getValues()))
      os << "outputs[" << i << "] = " << env[v] << ";  // "
         << commentText(cast<StringAttr>(o.getNames()[i]).getValue()) << "\n";
    os.unindent();
    os << "}\n";
    return success();
  }

  // DeviceModel::input(i): a cudaMalloc'd buffer, 256-byte aligned.
  static void bindInput(raw_indented_ostream &os, const std::string &name,
                        const std::string &type, int index) {
    os << type << " *" << name << " = static_cast<" << type << " *>(input("
       << index << "));\n";
  }

  // Names that generated locals must not take: the bodies' own and
  // DeviceModel's members they call.
  static void reserve(BlockEnv &env) {
    for (StringRef n : {"arena", "outputs", "micro", "in", "out", "attrs", "i",
                        "input", "weight", "lossScale", "iteration", "addLoss",
                        "storeGrad", "grid", "call", "fill", "kernel",
                        "grad", "halfGrad", "gradReady"})
      env.used.insert(n);
  }
};

} // namespace

LogicalResult ampc::emitCudaTrainingProgram(ModuleOp module, raw_ostream &os) {
  Program p;
  if (failed(collect(module, p)))
    return failure();
  AsmState state(module);
  FileEmitter emitter(p, os, state);
  return emitter.emit();
}

FailureOr<std::vector<std::string>>
ampc::cudaFusedKernelNames(ModuleOp module) {
  Program p;
  if (failed(collect(module, p)))
    return failure();
  AsmState state(module);
  FileEmitter emitter(p, llvm::nulls(), state);
  if (failed(emitter.emit()))
    return failure();
  return emitter.gradLaunches;
}
