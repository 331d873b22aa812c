//===- Model.h - The contract between generated code and the runtime -*- C++ -*-===//
//
// `ampc compile` emits one C++ (or CUDA C++) file defining a subclass of
// ampc::rt::Model and a main() that calls ampc::rt::trainMain(). The runtime
// owns everything that is not the model's math: flags, data, the training
// loop, gradient all-reduce, metrics and checkpoints. The generated code owns
// the math: forward, backward and the fused AMP epilogue (unscale, overflow
// check, clip, optimizer update with skip-on-overflow, loss-scale update).
//
// The runtime never includes MLIR; generated code includes only runtime/.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_MODEL_H
#define AMPC_RUNTIME_MODEL_H

#include "runtime/numerics/Init.h"
#include "runtime/numerics/Scaler.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

enum class DType : int32_t { F32, F16, BF16, I32, I64 };

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // static; dim 0 of an input is its batch dim
  // Integer inputs: valid values are [0, valueBound) or ignoreValue (0:
  // unchecked). The compiler derives them from the input's consumers (the
  // classes of a cross_entropy, the rows of an embedding table) so the
  // runtime can name a bad data file instead of failing in a kernel.
  int64_t valueBound = 0;
  std::optional<int64_t> ignoreValue; // cross_entropy's ignore_index
  std::string boundBy; // what sets the bound: "classes of the cross_entropy"
};

struct ParamInfo {
  std::string name;             // "fc1.weight"
  std::vector<int64_t> shape;   // FP32 master weight
  num::InitSpec init;           // resolved initializer (fans applied)
  // The step reads a half copy of the master (CompileConfig::amp's type,
  // passes/TrainHalfWeightCopies.cpp) that the fused epilogue writes with
  // each update and the model recasts after anything else writes masters.
  bool halfCopy = false;
  // Zero elements the copy is followed by, which the step reads as rows of
  // the weight (graph-pad-classes' padded LM head; TrainHalfWeightCopies):
  // allocated zeroed once, never written.
  int64_t halfPadding = 0;
  // The type the step returns the gradient in: F32, or under AMP the half
  // type of the GEMM that computed it (passes/TrainHalfGrads.cpp), which
  // the model widens (Model::requireFloatGrads).
  DType gradType = DType::F32;
};

// What was fixed at compile time (`ampc compile` flags).
struct CompileConfig {
  std::string target = "cpu";       // cpu | cuda
  std::string amp = "off";          // off | fp16 | bf16
  std::string optimizer = "adamw";  // sgd | adam | adamw
  std::string lossScale = "none";   // dynamic | static | none
  bool nesterov = false;            // SGD only
  bool clipNorm = false;            // clip by global norm compiled in
  bool clipValue = false;           // clip by value compiled in
  int accumSteps = 1;               // micro-batches per optimizer step
};

// Values that do not change the code: runtime flags, defaulting to what was
// compiled in (Model::defaults()). One field per row of HyperParams.def.
struct Hyper {
#define AMPC_HYPER(name, field, type, dflt, help) type field = dflt;
#include "runtime/HyperParams.def"
};

// The scaler's part of Hyper, for num::updateScaler (runtime/numerics/Scaler.h).
AMPC_HD inline num::LossScaleParams lossScaleParams(const Hyper &h) {
  return {h.growthFactor, h.backoffFactor, h.growthInterval,
          h.hysteresis,   h.minScale,      h.maxScale,
          h.scaleFloor,   h.maxConsecutiveSkips};
}

// Loss-scaler state; part of every checkpoint.
struct ScalerState {
  float scale = 1.0f;
  int32_t growthTracker = 0;
  int32_t hysteresisLeft = 1;
  int64_t skippedSteps = 0;
  // Not checkpointed (a halted run writes no checkpoint; the count of
  // consecutive skips starts again at a resume). See num::finishStep.
  int64_t consecutiveSkips = 0; // skipped steps since the last applied one
  int32_t halted = 0;           // a num::HaltReason; then every step is refused
  float haltScale = 0;          // the scale the halting step would have set
  int64_t refusedSteps = 0;     // steps refused since the halt
};

// What one optimizer step reports (read only at log steps on the GPU).
struct StepStats {
  float loss = 0;       // mean over micro-batches, unscaled
  float gradNorm = 0;   // global norm of the unscaled gradients (pre-clip)
  float clipCoef = 1;   // min(1, max_norm / (norm + 1e-6)) or 1
  int32_t skipped = 0;  // 1 when a non-finite gradient skipped the step
  float scaleUsed = 1;  // the loss scale this step ran with
  int32_t halted = 0;   // a num::HaltReason: this step halted the run (the
                        // GPU keeps these stats for the steps it refuses)
};

// Everything the generated code knows of its model besides the math: the
// metadata Model's accessors return, the compiled-in configuration and
// defaults, and the size of the memory plan's arena. The generated class
// hands it to its base (cpu::HostModel, cuda::DeviceModel), which owns the
// storage and the fixed logic.
struct ModelSpec {
  std::string name;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs; // [0] is the loss
  std::vector<ParamInfo> params;
  // Model state that is not trained (graph.buffer: batch_norm's running
  // statistics), FP32, with its initializer; checkpointed under its name.
  std::vector<ParamInfo> buffers;
  // batch_norm's num_batches_tracked names: int64 scalars, all equal to the
  // training forwards run (TrainState::batchesTracked), in model.safetensors.
  std::vector<std::string> counters;
  CompileConfig config;
  Hyper defaults;
  int64_t arenaBytes = 0;        // intermediates of one step (kernel.arena_size)
  int64_t arenaBytesNoReuse = 0; // the same without buffer reuse (reported)
};

// A parameter with its initializer resolved against its shape (fans, gains).
inline ParamInfo makeParam(std::string name, std::vector<int64_t> shape,
                           const num::InitAttrs &init) {
  num::InitSpec spec = num::resolveInit(init, shape);
  return {std::move(name), std::move(shape), spec};
}

// A named FP32 tensor the runtime checkpoints: master weights, buffers and
// optimizer moments ("fc1.weight", "fc1.weight.exp_avg", ...). Optimizer
// state goes to optimizer.safetensors, everything else (the model's
// state_dict: parameters and buffers) to model.safetensors.
struct StateTensor {
  std::string name;
  std::vector<int64_t> shape;
  float *data = nullptr; // host-visible storage (the CUDA target stages it)
  // A buffer (graph.buffer): each data-parallel rank keeps its own, so it
  // is left out of the ranks' agreement check.
  bool perRank = false;
  bool optimizer = false; // optimizer state, not the model's
};

class Model {
public:
  virtual ~Model() = default;

  virtual const std::string &name() const = 0;
  virtual const std::vector<TensorInfo> &inputs() const = 0;
  virtual const std::vector<ParamInfo> &params() const = 0;
  // outputs()[0] is the loss; others (logits) follow in file order.
  virtual const std::vector<TensorInfo> &outputs() const = 0;
  virtual const CompileConfig &config() const = 0;
  virtual Hyper defaults() const = 0;
  // ModelSpec::counters (batch_norm's num_batches_tracked).
  virtual std::vector<std::string> batchCounters() const { return {}; }

  // Fills the master weights from their initializers (seeded) and zeroes
  // optimizer state; resets the scaler to |hyper|.initScale.
  virtual void initialize(uint64_t seed, const Hyper &hyper) = 0;

  // Called once before the first micro-batch of every iteration (0-based,
  // skipped steps included; continued across --resume). Dropout keys its
  // masks on (seed, iteration, ...), so a resumed run draws the same masks.
  virtual void beginStep(int64_t iteration) { (void)iteration; }

  // Data-parallel runs, once before training: this process is rank |rank| of
  // |worldSize| and its batch is the rank-th contiguous slice of the global
  // batch. Dropout adds rank x (elements of the tensor) to the element index
  // of its mask, so each rank draws its slice of the mask one process would
  // draw for the global batch (batch-major tensors): ranks differ, and N
  // ranks match one rank at N times the batch.
  virtual void setDataShard(int rank, int worldSize) {
    (void)rank;
    (void)worldSize;
  }

  // Forward + backward of one micro-batch. |inputs|[i] points at input i's
  // batch in its dtype. Gradients of the loss times the current loss scale
  // are written (micro == 0) or accumulated (micro > 0). Returns nothing;
  // the loss is reported by step().
  virtual void forwardBackward(const void *const *inputs, int micro) = 0;

  // Gradient buffers (FP32, one per parameter, in params() order; device
  // memory on a GPU model): the runtime all-reduces them between
  // forwardBackward() and step().
  virtual float *grad(int param) = 0;
  // Gradients the step returns in half precision (ParamInfo::gradType)
  // reach grad() only after this was called: otherwise a model may keep
  // them in half and have step() widen them as it reads them (the CUDA
  // target does, with one micro-batch a step). The runtime calls it before
  // training when it reads grad() between forwardBackward() and step()
  // (data parallel, --dump-step); micro-batches accumulate in grad()
  // anyway.
  virtual void requireFloatGrads() {}
  // Sum of micro-batch losses since the last step(); all-reduced with the
  // gradients in data-parallel runs.
  virtual float *lossAccumulator() = 0;

  // Overlapped data-parallel all-reduce (runtime/train/DataParallel.cpp).
  // With a hook set, every forwardBackward() calls it once per parameter
  // whose gradient the micro-batch produced, once that gradient is final in
  // grad(param) (after the last kernel that writes, copies or accumulates
  // it, and after the last one that reads it), so the runtime can start its
  // bucket while the backward goes on. Host models call it from inside the
  // backward with a null event; GPU models call it after queueing the
  // micro-batch (a replayed graph), with |readyEvent| a cudaEvent_t recorded
  // on computeStream() at that point of the backward. Set it (or clear it
  // with an empty hook) between micro-batches; false when the model has no
  // such points (then the runtime reduces after the backward).
  using GradReadyHook = std::function<void(int param, void *readyEvent)>;
  virtual bool setGradReadyHook(GradReadyHook hook) {
    (void)hook;
    return false;
  }

  // GPU models: the stream (a cudaStream_t) forwardBackward() and step()
  // queue their work on, so that collectives on grad() and lossAccumulator()
  // can be ordered after the backward (Communicator::setProducerStream).
  // Null for host models.
  virtual void *computeStream() { return nullptr; }
  // Copies |bytes| at |src| (inside grad() or lossAccumulator(), which are
  // device memory on a GPU model) to the host buffer |dst|, after the work
  // queued so far. For debugging paths (--dump-step): it may block.
  virtual void copyToHost(void *dst, const void *src, size_t bytes) {
    std::memcpy(dst, src, bytes);
  }

  // The fused epilogue: unscale, non-finite check, global norm, clip,
  // optimizer update skipped on overflow, loss-scale update. |gradDivisor|
  // is the number of micro-batches times ranks the gradients summed over.
  virtual StepStats step(const Hyper &hyper, float gradDivisor) = 0;

  // Called before step(): whether the runtime will read that step's stats
  // (log steps, the last step). When false a GPU model need not wait for
  // the step to finish and may return the last stats it read.
  virtual void setStatsWanted(bool wanted) { (void)wanted; }

  // Overflow attribution. Per parameter (params() order): 1 when its
  // gradient held inf or NaN in the step whose stats step() last returned
  // (on a GPU they come with those stats, so they are read at the same
  // steps: no wait of their own). Empty when the model cannot tell.
  virtual std::vector<uint8_t> nonFiniteGrads() { return {}; }
  // Per parameter: in how many steps since initialize() its gradient held
  // inf or NaN (each of them skipped). May wait for the device.
  virtual std::vector<int64_t> nonFiniteCounts() { return {}; }

  // Forward only; writes outputs()[i] into |outputs|[i] (host memory, in
  // each output's dtype).
  virtual void evaluate(const void *const *inputs, void *const *outputs) = 0;

  // Checkpointed state: parameters, optimizer moments, counters.
  virtual std::vector<StateTensor> stateTensors() = 0;
  virtual ScalerState &scaler() = 0;
  virtual int64_t &optimizerStep() = 0; // steps taken (not skipped ones)
};

// The training binary's main(): parses flags, loads data, runs the loop.
int trainMain(int argc, char **argv, Model &model);

} // namespace ampc::rt

#endif
