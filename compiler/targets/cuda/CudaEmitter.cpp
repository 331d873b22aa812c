//===- CudaEmitter.cpp - The .cu file: device state, graphs, main() --------===//
//
// The generated class keeps every tensor on the device: FP32 masters,
// gradients and moments in one allocation each, intermediates in one arena
// (the memory plan), the scaler, step counter and statistics in a
// DeviceState (runtime/cuda/Epilogue.h). Host copies exist only for
// checkpoints (stateTensors/scaler/optimizerStep stage them; the next step
// uploads them back, which is what --resume needs).
//
// Per step: inputs are copied into pinned staging (double-buffered) and on
// a copy stream to the device; forwardBackward() and step() each run
// eagerly once (warm-up: library scratch, cuBLASLt plans), are captured
// into a CUDA graph on their second call and replayed after that (dropout
// reads its step from device memory, so it replays too). The statistics go
// to pinned memory inside the step graph; the host waits for them only
// when the runtime asks (Model::setStatsWanted, log steps).
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cuda/CudaEmitter.h"
#include "compiler/targets/cuda/CudaEmitterImpl.h"
#include "compiler/targets/common/EmitModel.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;
using namespace ampc::cuda_emit;

namespace {

constexpr const char *kPreamble = R"cpp(#include "runtime/Model.h"
#include "runtime/cuda/Epilogue.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/numerics/Activation.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"
#include "runtime/numerics/Scaler.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
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

)cpp";


constexpr const char *kPreambleEnd = R"cpp(
template <typename T> __global__ void fill(T *p, int64_t n, T v) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

// Micro-batches after the first add their gradients.
__global__ void accumulate(float *g, const float *x, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    g[i] += x[i];
}

// The dropout step counter moves on by one micro-batch (inside the graph).
__global__ void advance(int64_t *counter) { *counter += 1; }

// The loss of one micro-batch joins the device-side accumulator.
template <typename T> __global__ void addLoss(float *acc, const T *loss) {
  *acc += float(*loss);
}

inline int grid(int64_t n) {
  return int(std::clamp<int64_t>((n + 255) / 256, 1, 65536));
}

ampc::cuda::Kernel kernel(const char *name) {
  ampc::cuda::Kernel k = ampc::cuda::lookup(name);
  if (!k) {
    std::fprintf(stderr, "error: the CUDA kernel library has no %s\n", name);
    std::exit(1);
  }
  return k;
}

)cpp";

// The device pointer of parameter k's FP32 master in the generated class.
std::string deviceWeight(size_t k) { return "w_[" + std::to_string(k) + "]"; }

class FileEmitter {
public:
  FileEmitter(Program &p, raw_ostream &out, AsmState &state)
      : p(p), out(out), state(state) {}

  LogicalResult emit() {
    std::string cls = className(p.model.getSymName());
    kernels = libraryKernels(p);
    p.model.walk([&](graph::DropoutOp) { hasDropout = true; });
    p.grad.walk([&](graph::DropoutOp) { hasDropout = true; });

    // Bodies first: they collect the kernels and constants printed above
    // the class.
    std::string fb, eval;
    {
      llvm::raw_string_ostream s(fb);
      raw_indented_ostream os(s);
      os.indent();
      os.indent();
      if (failed(emitForwardBackward(os)))
        return failure();
    }
    {
      llvm::raw_string_ostream s(eval);
      raw_indented_ostream os(s);
      os.indent();
      os.indent();
      if (failed(emitEvaluate(os)))
        return failure();
    }

    emitFileHeader(out, p, kCudaSyntax);
    out << kPreamble << kPreambleEnd;
    out << "// Fused elementwise kernels (kernel.fused_elementwise).\n"
        << parts.kernels;
    out << "// Non-splat constants, copied to the device once.\n";
    for (auto [i, c] : llvm::enumerate(parts.constants))
      out << "const " << c.type << " kConstant" << i << "[] = " << c.values
          << ";\n";
    out << "\nclass " << cls << " final : public ampc::rt::Model {\npublic:\n";
    raw_indented_ostream os(out);
    os.indent();
    emitMetadataAccessors(os);
    emitDefaults(os, p);
    emitInitialize(os);
    os << fb << "\n";
    emitStep(os);
    os << eval << "\n";
    emitState(os);
    os.unindent();
    emitMembers(os);
    emitClassEndAndMain(os, cls);
    return success();
  }

private:
  Program &p;
  raw_ostream &out;
  AsmState &state;
  FileParts parts;
  bool hasDropout = false;
  llvm::SetVector<StringRef> kernels;
  SmallVector<int64_t> inputBytes;

  size_t numParams() const { return p.paramNames.size(); }
  bool sgd() const { return p.epilogue.getOptimizer() == "sgd"; }

  SmallVector<int64_t> paramSizes() {
    SmallVector<int64_t> n;
    for (auto param : p.model.getBlock().getOps<graph::ParamOp>())
      n.push_back(cast<RankedTensorType>(param.getType()).getNumElements());
    return n;
  }

  void emitInitialize(raw_indented_ostream &os) {
    bool none = p.epilogue.getLossScale() == "none";
    os << "void initialize(uint64_t seed, const ampc::rt::Hyper &hyper) "
          "override {\n";
    os.indent();
    os << "setup();\n"
       << "seed_ = seed;\n"
       << "for (int p = 0; p < kNumParams; ++p)\n"
       << "  ampc::num::fillInit(params_[p].init, seed, "
          "ampc::num::streamId(params_[p].name), "
          "std::span<float>(hostW_.data() + kOffset[p], size_t(kNumel[p])));\n"
       << "std::fill(hostM_.begin(), hostM_.end(), 0.0f);\n"
       << "std::fill(hostV_.begin(), hostV_.end(), 0.0f);\n"
       << "uploadTensors();\n"
       << "check(cudaMemset(g_[0], 0, kTotal * sizeof(float)), "
          "\"cudaMemset\");\n"
       << "ampc::cuda::DeviceState s;\n"
       << "s.scaler.scale = "
       << (none ? "1.0f;  // no loss scaling" : "hyper.initScale;") << "\n"
       << "s.scaler.hysteresisLeft = hyper.hysteresis;\n"
       << "s.hyper = hyper;\n"
       << "check(cudaMemcpy(state_, &s, sizeof(s), cudaMemcpyHostToDevice), "
          "\"state\");\n"
       << "iteration_ = 0;\n"
       << "dropStepNext_ = -1;\n"
       << "tensorsOut_ = stateOut_ = false;\n"
       << "// The memset and the pageable copies above ran on the legacy "
          "stream, which\n// does not order stream_ (non-blocking): let them "
          "land first.\n"
       << "check(cudaDeviceSynchronize(), \"initialize\");\n";
    os.unindent();
    os << "}\n\n";
  }

  LogicalResult emitForwardBackward(raw_indented_ostream &os) {
    BlockEnv env;
    env.asmState = &state;
    env.training = true;
    env.dropoutStep = "int64_t(iteration_ * " + std::to_string(accumSteps(p)) +
                      " + micro)";
    reserve(env);
    func::FuncOp fn = p.grad;
    os << "// @" << fn.getSymName()
       << ": forward and backward of one micro-batch (captured once per "
          "micro == 0 / micro > 0).\n";
    os << "void runForwardBackward(int micro) {\n";
    os.indent();
    os << "std::byte *arena = arena_;\n";
    auto input = [&](const std::string &name, const std::string &type,
                     int index, Value v) {
      os << type << " *" << name << " = static_cast<" << type << " *>(din_["
         << index << "]);\n";
      inputBytes.push_back(byteSize(v.getType()));
    };
    // The scale lives on the device: the graph reads the current one.
    if (failed(bindGradArguments(p, env, os, kCudaSyntax, deviceWeight,
                                 "(&state_->scaler.scale)", input)))
      return failure();
    os << "\n";
    if (failed(emitCudaBlock(fn.getBody().front(), env, parts, os)))
      return failure();
    os << "\n// Results: the loss joins the device accumulator; gradients "
          "written or accumulated.\n";
    auto loss = [&](Value v) {
      os << "addLoss<<<1, 1, 0, stream_>>>(&state_->lossAccumulator, "
         << env[v] << ");\n";
    };
    auto grad = [&](Value v, size_t idx, int64_t count, StringRef name) {
      os << "if (micro == 0)\n  check(cudaMemcpyAsync(g_[" << idx << "], "
         << env[v] << ", " << count * 4
         << ", cudaMemcpyDeviceToDevice, stream_), \"grad\");\nelse\n"
         << "  accumulate<<<grid(" << count << "), 256, 0, stream_>>>(g_["
         << idx << "], " << env[v] << ", " << count << ");  // " << name
         << "\n";
    };
    if (failed(forEachGradResult(p, loss, grad)))
      return failure();
    os.unindent();
    os << "}\n\n";

    os << "// Inputs: host -> pinned staging -> device on the copy stream, "
          "overlapping the previous step.\n";
    os << "void forwardBackward(const void *const *inputs, int micro) "
          "override {\n";
    os.indent();
    os << "setup();\n"
       << "uploadIfPending();\n"
       << "int slot = slot_;\n"
       << "slot_ ^= 1;\n"
       << "// The copy that last used this pinned slot (two calls ago) is "
          "done.\n"
       << "check(cudaEventSynchronize(copied_[slot]), \"staging\");\n"
       << "for (int i = 0; i < kNumInputs; ++i)\n"
       << "  std::memcpy(hin_[slot][i], inputs[i], size_t(kInputBytes[i]));\n"
       << "// Overwrite the device inputs once the previous forward read "
          "them.\n"
       << "check(cudaStreamWaitEvent(copyStream_, consumed_, 0), \"wait\");\n"
       << "for (int i = 0; i < kNumInputs; ++i)\n"
       << "  check(cudaMemcpyAsync(din_[i], hin_[slot][i], "
          "size_t(kInputBytes[i]), cudaMemcpyHostToDevice, copyStream_), "
          "\"input\");\n"
       << "check(cudaEventRecord(copied_[slot], copyStream_), \"record\");\n"
       << "check(cudaStreamWaitEvent(stream_, copied_[slot], 0), \"wait\");\n"
       << "// Two graphs: micro == 0 writes the gradients, micro > 0 adds.\n"
       << "int v = micro > 0 ? 1 : 0;\n";
    if (hasDropout)
      os << "// Dropout reads its step (iteration * accum + micro) from "
            "dropStep_, which\n// every run advances; set it where the "
            "count breaks (first step, resume).\n"
         << "const int64_t step = iteration_ * " << accumSteps(p)
         << " + micro;\n"
         << "if (step != dropStepNext_) {\n"
         << "  check(cudaMemcpyAsync(dropStep_, &step, sizeof step, "
            "cudaMemcpyHostToDevice, stream_), \"dropout step\");\n"
         << "  check(cudaStreamSynchronize(stream_), \"dropout step\");\n"
         << "}\n"
         << "dropStepNext_ = step + 1;\n"
         << "replay(fbExec_[v], fbRuns_[v], [&] {\n"
         << "  runForwardBackward(micro);\n"
         << "  advance<<<1, 1, 0, stream_>>>(dropStep_);\n"
         << "});\n";
    else
      os << "replay(fbExec_[v], fbRuns_[v], [&] { runForwardBackward(micro); "
            "});\n";
    os
       << "check(cudaEventRecord(consumed_, stream_), \"record\");\n";
    os.unindent();
    os << "}\n\n";
    return success();
  }

  void emitStep(raw_indented_ostream &os) {
    train::FusedEpilogueOp e = p.epilogue;
    os << "float *grad(int param) override { return g_[param]; }  // device\n"
       << "float *lossAccumulator() override { return "
          "&state_->lossAccumulator; }  // device\n"
       << "void beginStep(int64_t iteration) override { iteration_ = "
          "iteration; }\n"
       << "// Dropout masks differ per data-parallel rank, as on the CPU "
          "target.\n"
       << "void setDataShard(int rank, int) override { shard_ = rank; }\n"
       << "void setStatsWanted(bool wanted) override { statsWanted_ = wanted; "
          "}\n"
       << "// NCCL orders the gradient all-reduce after the work queued "
          "here.\n"
       << "void *computeStream() override {\n"
       << "  setup();\n"
       << "  return stream_;\n"
       << "}\n"
       << "// grad() and lossAccumulator() are device memory (--dump-step "
          "reads them here).\n"
       << "void copyToHost(void *dst, const void *src, size_t bytes) "
          "override {\n"
       << "  setup();\n"
       << "  check(cudaStreamSynchronize(stream_), \"sync\");\n"
       << "  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "
          "\"copyToHost\");\n"
       << "}\n\n";
    os << "// train.fused_epilogue {optimizer = \"" << e.getOptimizer()
       << "\", loss_scale = \"" << e.getLossScale() << "\""
       << (e.getClipNorm() ? ", clip_norm" : "")
       << (e.getClipValue() ? ", clip_value" : "")
       << (e.getNesterov() ? ", nesterov" : "")
       << "}: two multi-tensor kernels (runtime/cuda/Epilogue.h); the skip "
          "decision and the scaler update stay on the device.\n";
    os << "ampc::rt::StepStats step(const ampc::rt::Hyper &h, float "
          "gradDivisor) override {\n";
    os.indent();
    os << "setup();\n"
       << "uploadIfPending();\n"
       << "ampc::cuda::setStepInputs(state_, h, gradDivisor, stream_);\n"
       << "replay(stepExec_, stepRuns_, [&] {\n"
       << "  epilogue_->run(state_, stream_);\n"
       << "  check(cudaMemcpyAsync(pinnedStats_, &state_->stats, "
          "sizeof(ampc::rt::StepStats), cudaMemcpyDeviceToHost, stream_), "
          "\"stats\");\n"
       << "});\n"
       << "check(cudaEventRecord(stepDone_, stream_), \"record\");\n"
       << "if (statsWanted_) {  // log steps only: the one wait of a step\n"
       << "  check(cudaEventSynchronize(stepDone_), \"stats\");\n"
       << "  lastStats_ = *pinnedStats_;\n"
       << "}\n"
       << "return lastStats_;\n";
    os.unindent();
    os << "}\n\n";
  }

  LogicalResult emitEvaluate(raw_indented_ostream &os) {
    BlockEnv env;
    env.asmState = &state;
    env.training = false;
    reserve(env);
    os << "// @" << p.model.getSymName()
       << ": the forward pass (dropout off), eager.\n";
    os << "void evaluate(const void *const *inputs, void *const *outputs) "
          "override {\n";
    os.indent();
    os << "setup();\n"
       << "uploadIfPending();\n"
       << "check(cudaStreamSynchronize(stream_), \"sync\");\n"
       << "std::byte *arena = arena_;\n";
    bindModelValues(p, env, os, kCudaSyntax, deviceWeight,
                    [&](const std::string &name, const std::string &type,
                        int index, Value v) {
                      os << type << " *" << name << " = static_cast<" << type
                         << " *>(din_[" << index << "]);\n"
                         << "check(cudaMemcpyAsync(" << name << ", inputs["
                         << index << "], " << byteSize(v.getType())
                         << ", cudaMemcpyHostToDevice, stream_), "
                            "\"input\");\n";
                    });
    os << "\n";
    if (failed(emitCudaBlock(p.model.getBlock(), env, parts, os)))
      return failure();
    os << "\n";
    graph::OutputOp o = p.model.getOutputOp();
    for (auto [i, v] : llvm::enumerate(o.getValues()))
      os << "check(cudaMemcpyAsync(outputs[" << i << "], " << env[v] << ", "
         << byteSize(v.getType()) << ", cudaMemcpyDeviceToHost, stream_), "
         << "\"output\");  // "
         << cast<StringAttr>(o.getNames()[i]).getValue() << "\n";
    os << "check(cudaStreamSynchronize(stream_), \"evaluate\");\n";
    os.unindent();
    os << "}\n\n";
    return success();
  }

  void emitState(raw_indented_ostream &os) {
    os << "// Checkpoints: host copies staged here; the next step uploads "
          "them back.\n";
    os << "std::vector<ampc::rt::StateTensor> stateTensors() override {\n";
    os.indent();
    os << "setup();\n"
       << "downloadTensors();\n"
       << "std::vector<ampc::rt::StateTensor> s;\n"
       << "for (int p = 0; p < kNumParams; ++p) {\n"
       << "  const std::string &n = params_[p].name;\n"
       << "  const std::vector<int64_t> &shape = params_[p].shape;\n"
       << "  s.push_back({n, shape, hostW_.data() + kOffset[p]});\n";
    if (sgd())
      os << "  s.push_back({n + \".momentum_buffer\", shape, hostM_.data() + "
            "kOffset[p]});\n";
    else
      os << "  s.push_back({n + \".exp_avg\", shape, hostM_.data() + "
            "kOffset[p]});\n"
         << "  s.push_back({n + \".exp_avg_sq\", shape, hostV_.data() + "
            "kOffset[p]});\n";
    os << "}\nreturn s;\n";
    os.unindent();
    os << "}\n"
       << "ampc::rt::ScalerState &scaler() override {\n"
       << "  downloadState();\n"
       << "  return hostState_.scaler;\n"
       << "}\n"
       << "int64_t &optimizerStep() override {\n"
       << "  downloadState();\n"
       << "  return hostState_.step;\n"
       << "}\n\n";
  }

  void emitMembers(raw_indented_ostream &os) {
    SmallVector<int64_t> sizes = paramSizes();
    int64_t total = 0;
    SmallVector<int64_t> offsets;
    for (int64_t n : sizes) {
      offsets.push_back(total);
      // 256-byte aligned tensors (fused kernels' packed accesses rely on it:
      // CudaEmitBlock.cpp, knownAlignment).
      total += (n + 63) / 64 * 64;
    }
    int64_t arena =
        std::max(arenaSize(p.grad), arenaSize(p.model.getOperation()));
    auto list = [](ArrayRef<int64_t> v) {
      std::string s = "{";
      for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
      return s + (v.empty() ? "0}" : "}");
    };
    os << "private:\n";
    os.indent();
    os << "static constexpr int kNumParams = " << numParams() << ";\n"
       << "static constexpr int64_t kNumel[] = " << list(sizes) << ";\n"
       << "static constexpr int64_t kOffset[] = " << list(offsets)
       << ";  // elements, 256-byte aligned\n"
       << "static constexpr int64_t kTotal = " << total << ";\n"
       << "static constexpr int kNumInputs = " << inputBytes.size() << ";\n"
       << "static constexpr int64_t kInputBytes[] = " << list(inputBytes)
       << ";\n"
       << "static constexpr int64_t kArenaBytes = " << arena << ";\n"
       << "static constexpr int kNumConstants = " << parts.constants.size()
       << ";\n"
       << "\n";

    os << "// Device memory, streams, graphs; made on first use (never in a "
          "static constructor).\n"
       << "void setup() {\n";
    os.indent();
    os << "if (ready_)\n  return;\n"
       << "ready_ = true;\n"
       << "if (!ampc::cuda::deviceAvailable()) {\n"
       << "  std::fprintf(stderr, \"error: no CUDA device (this binary was "
          "compiled with --target=cuda)\\n\");\n"
       << "  std::exit(1);\n"
       << "}\n"
       << "ampc::cuda::initialize();\n"
       << "check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "
          "\"stream\");\n"
       << "check(cudaStreamCreateWithFlags(&copyStream_, "
          "cudaStreamNonBlocking), \"stream\");\n"
       << "for (cudaEvent_t *e : {&copied_[0], &copied_[1], &consumed_, "
          "&stepDone_})\n"
       << "  check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "
          "\"event\");\n"
       << "float *blocks[" << (sgd() ? 3 : 4) << "];\n"
       << "for (float *&b : blocks)\n"
       << "  check(cudaMalloc(&b, std::max<int64_t>(kTotal, 1) * "
          "sizeof(float)), \"cudaMalloc(params)\");\n"
       << "for (int p = 0; p < kNumParams; ++p) {\n"
       << "  w_[p] = blocks[0] + kOffset[p];\n"
       << "  g_[p] = blocks[1] + kOffset[p];\n"
       << "  m_[p] = blocks[2] + kOffset[p];\n"
       << (sgd() ? "  v_[p] = nullptr;\n" : "  v_[p] = blocks[3] + kOffset[p];\n")
       << "}\n"
       << "hostW_.assign(kTotal, 0.0f);\n"
       << "hostM_.assign(kTotal, 0.0f);\n"
       << (sgd() ? "" : "hostV_.assign(kTotal, 0.0f);\n")
       // arena_, din_[i] and the parameter blocks come from cudaMalloc (256-byte
       // aligned), which fused kernels' packed accesses rely on
       // (CudaEmitBlock.cpp, knownAlignment): keep them so.
       << "check(cudaMalloc(&arena_, kArenaBytes + 256), \"cudaMalloc(arena)\");\n"
       << "check(cudaMalloc(&state_, sizeof(ampc::cuda::DeviceState)), "
          "\"cudaMalloc(state)\");\n"
       << (hasDropout ? "check(cudaMalloc(&dropStep_, sizeof(int64_t)), "
                        "\"cudaMalloc(dropout step)\");\n"
                      : "")
       << "check(cudaMallocHost(&pinnedStats_, sizeof(ampc::rt::StepStats)), "
          "\"cudaMallocHost\");\n"
       << "for (int i = 0; i < kNumInputs; ++i) {\n"
       << "  check(cudaMalloc(&din_[i], size_t(kInputBytes[i])), "
          "\"cudaMalloc(input)\");\n"
       << "  for (int s = 0; s < 2; ++s)\n"
       << "    check(cudaMallocHost(&hin_[s][i], size_t(kInputBytes[i])), "
          "\"cudaMallocHost(input)\");\n"
       << "}\n";
    for (auto [i, c] : llvm::enumerate(parts.constants))
      os << "check(cudaMalloc(&constants_[" << i << "], " << c.bytes
         << "), \"cudaMalloc(constant)\");\n"
         << "check(cudaMemcpy(constants_[" << i << "], kConstant" << i << ", "
         << c.bytes << ", cudaMemcpyHostToDevice), \"constant\");\n";
    // The epilogue's tensors.
    std::string opt = p.epilogue.getOptimizer().str();
    std::string ls = p.epilogue.getLossScale().str();
    os << "ampc::cuda::EpilogueConfig ec;\n"
       << "ec.optimizer = ampc::cuda::EpilogueConfig::Optimizer::"
       << (opt == "sgd" ? "Sgd" : opt == "adam" ? "Adam" : "AdamW") << ";\n"
       << "ec.lossScale = ampc::cuda::EpilogueConfig::LossScale::"
       << (ls == "dynamic" ? "Dynamic" : ls == "static" ? "Static" : "None")
       << ";\n"
       << "ec.clipNorm = " << (p.epilogue.getClipNorm() ? "true" : "false")
       << ";\n"
       << "ec.clipValue = " << (p.epilogue.getClipValue() ? "true" : "false")
       << ";\n"
       << "ec.nesterov = " << (p.epilogue.getNesterov() ? "true" : "false")
       << ";\n"
       << "ec.gradType = DType::F32;  // @grad returns FP32 gradients\n"
       << "std::vector<ampc::cuda::EpilogueTensor> ts;\n"
       << "for (int p = 0; p < kNumParams; ++p)\n"
       << "  ts.push_back({g_[p], w_[p], m_[p], v_[p], nullptr, kNumel[p]});\n"
       << "epilogue_ = std::make_unique<ampc::cuda::Epilogue>(std::move(ts), "
          "ec);\n"
       << "// The constant and epilogue-table uploads are pageable copies on "
          "the legacy\n// stream: they may return before the DMA lands, and "
          "stream_ does not wait for it.\n"
       << "check(cudaDeviceSynchronize(), \"setup\");\n";
    os.unindent();
    os << "}\n\n";

    os << "// Runs |body| eagerly the first time (warm-up), captures it into "
          "a graph the\n// second time, and replays the graph from then on.\n"
       << "template <class F> void replay(cudaGraphExec_t &exec, int &runs, "
          "F body) {\n"
       << "  if (runs++ == 0) {\n"
       << "    body();\n"
       << "    return;\n"
       << "  }\n"
       << "  if (!exec) {\n"
       << "    cudaGraph_t graph;\n"
       << "    check(cudaStreamBeginCapture(stream_, "
          "cudaStreamCaptureModeThreadLocal), \"capture\");\n"
       << "    body();\n"
       << "    check(cudaStreamEndCapture(stream_, &graph), \"capture (a host "
          "sync inside the step?)\");\n"
       << "    check(cudaGraphInstantiate(&exec, graph, 0), "
          "\"cudaGraphInstantiate\");\n"
       << "    check(cudaGraphDestroy(graph), \"cudaGraphDestroy\");\n"
       << "  }\n"
       << "  check(cudaGraphLaunch(exec, stream_), \"cudaGraphLaunch\");\n"
       << "}\n\n";

    os << "template <size_t N, size_t M>\n"
       << "void call(ampc::cuda::Kernel k, const TensorRef (&in)[N], const "
          "TensorRef (&out)[M], const ampc::cuda::Attrs &attrs) {\n"
       << "  k(std::span<const TensorRef>(in, N), std::span<const "
          "TensorRef>(out, M), attrs, stream_);\n"
       << "}\n\n";

    os << "void uploadTensors() {\n"
       << "  check(cudaMemcpy(w_[0], hostW_.data(), kTotal * sizeof(float), "
          "cudaMemcpyHostToDevice), \"upload\");\n"
       << "  check(cudaMemcpy(m_[0], hostM_.data(), kTotal * sizeof(float), "
          "cudaMemcpyHostToDevice), \"upload\");\n"
       << (sgd() ? ""
                 : "  check(cudaMemcpy(v_[0], hostV_.data(), kTotal * "
                   "sizeof(float), cudaMemcpyHostToDevice), \"upload\");\n")
       << "}\n"
       << "void downloadTensors() {\n"
       << "  if (tensorsOut_)\n    return;  // already staged (and maybe "
          "edited by a resume)\n"
       << "  check(cudaStreamSynchronize(stream_), \"sync\");\n"
       << "  check(cudaMemcpy(hostW_.data(), w_[0], kTotal * sizeof(float), "
          "cudaMemcpyDeviceToHost), \"download\");\n"
       << "  check(cudaMemcpy(hostM_.data(), m_[0], kTotal * sizeof(float), "
          "cudaMemcpyDeviceToHost), \"download\");\n"
       << (sgd() ? ""
                 : "  check(cudaMemcpy(hostV_.data(), v_[0], kTotal * "
                   "sizeof(float), cudaMemcpyDeviceToHost), \"download\");\n")
       << "  tensorsOut_ = true;\n"
       << "}\n"
       << "void downloadState() {\n"
       << "  setup();\n"
       << "  if (stateOut_)\n    return;\n"
       << "  check(cudaStreamSynchronize(stream_), \"sync\");\n"
       << "  check(cudaMemcpy(&hostState_, state_, sizeof(hostState_), "
          "cudaMemcpyDeviceToHost), \"download\");\n"
       << "  stateOut_ = true;\n"
       << "}\n"
       << "// Host copies handed out (checkpoint save or load) go back before "
          "the next step.\n"
       << "void uploadIfPending() {\n"
       << "  if (!tensorsOut_ && !stateOut_)\n    return;\n"
       << "  if (tensorsOut_)\n    uploadTensors();\n"
       << "  if (stateOut_)\n"
       << "    check(cudaMemcpy(state_, &hostState_, sizeof(hostState_), "
          "cudaMemcpyHostToDevice), \"upload\");\n"
       << "  tensorsOut_ = stateOut_ = false;\n"
       << "  // Pageable cudaMemcpy on the legacy stream may return before the "
          "DMA lands;\n  // stream_ (non-blocking) would not wait for it.\n"
       << "  check(cudaDeviceSynchronize(), \"upload\");\n"
       << "}\n\n";

    emitTensorInfos(os, p);
    os << "std::vector<ampc::rt::ParamInfo> params_ = [] {\n"
       << "  std::vector<ampc::rt::ParamInfo> ps;\n"
       << "  auto add = [&](std::string name, std::vector<int64_t> shape, "
          "const ampc::num::InitAttrs &init) {\n"
       << "    ampc::num::InitSpec spec = ampc::num::resolveInit(init, "
          "shape);\n"
       << "    ps.push_back({std::move(name), std::move(shape), spec});\n"
       << "  };\n";
    for (auto param : p.model.getBlock().getOps<graph::ParamOp>()) {
      auto t = cast<RankedTensorType>(param.getType());
      os << "  add(" << quoted(param.getName()) << ", "
         << shapeList(t.getShape()) << ", " << initAttrs(param.getInit())
         << ");\n";
    }
    os << "  return ps;\n}();\n";
    emitCompileConfig(os, p, kCudaSyntax);
    os << "\n";
    os << "bool ready_ = false, tensorsOut_ = false, stateOut_ = false, "
          "statsWanted_ = true;\n"
       << "float *w_[kNumParams + 1] = {}, *g_[kNumParams + 1] = {}, "
          "*m_[kNumParams + 1] = {}, *v_[kNumParams + 1] = {};\n"
       << "std::vector<float> hostW_, hostM_, hostV_;\n"
       << "ampc::cuda::DeviceState *state_ = nullptr;\n"
       << "ampc::cuda::DeviceState hostState_;\n"
       << "ampc::rt::StepStats *pinnedStats_ = nullptr;\n"
       << "ampc::rt::StepStats lastStats_;\n"
       << "std::byte *arena_ = nullptr;\n"
       << "void *din_[kNumInputs + 1] = {}, *hin_[2][kNumInputs + 1] = {};\n"
       << "void *constants_[kNumConstants + 1] = {};\n"
       << "int slot_ = 0;\n"
       << "cudaStream_t stream_ = nullptr, copyStream_ = nullptr;\n"
       << "cudaEvent_t copied_[2] = {}, consumed_ = nullptr, stepDone_ = "
          "nullptr;\n"
       << "cudaGraphExec_t fbExec_[2] = {}, stepExec_ = nullptr;\n"
       << "int fbRuns_[2] = {}, stepRuns_ = 0;\n"
       << "std::unique_ptr<ampc::cuda::Epilogue> epilogue_;\n"
       << "int64_t iteration_ = 0;\n"
       << "int64_t shard_ = 0;  // data-parallel rank (dropout masks)\n"
       << "int64_t *dropStep_ = nullptr;  // dropout's step, on the device\n"
       << "int64_t dropStepNext_ = -1;    // what dropStep_ holds next\n"
       << "uint64_t seed_ = 0;\n";
    emitKernelMembers(os, kernels, kCudaSyntax);
    os.unindent();
  }

  // Names that generated locals must not take.
  void reserve(BlockEnv &env) {
    for (StringRef n : {"arena", "inputs", "outputs", "micro", "in", "out",
                        "attrs", "i", "v", "slot"})
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
