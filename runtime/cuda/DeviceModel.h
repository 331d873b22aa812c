//===- DeviceModel.h - The fixed part of every CUDA model -------*- C++ -*-===//
//
// The CUDA target prints one subclass of DeviceModel per model: the
// forward+backward and forward-only bodies (kernel calls on the arena) and
// the model's constants. Everything that does not depend on the model
// lives here, compiled and tested once:
//
// Every tensor stays on the device: FP32 masters, gradients and moments in
// one allocation each (each tensor 256-byte aligned in it), the half weight
// copies the step reads (passes/TrainHalfWeightCopies.cpp) in another,
// written by the epilogue and recast after each upload, the half gradients
// the step returns (passes/TrainHalfGrads.cpp) in a third, intermediates
// in one arena (the memory plan), the scaler, step counter and statistics
// in a DeviceState (runtime/cuda/Epilogue.h). Host copies exist only for
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
#ifndef AMPC_RUNTIME_CUDA_DEVICEMODEL_H
#define AMPC_RUNTIME_CUDA_DEVICEMODEL_H

#include "runtime/SpecModel.h"
#include "runtime/cuda/Epilogue.h"
#include "runtime/cuda/Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace ampc::cuda {

class DeviceModel : public rt::SpecModel {
public:
  // A non-splat constant of the model: host data copied to the device once
  // (setup()); the bodies copy it into the arena from constant(i).
  struct Constant {
    const void *data = nullptr;
    int64_t bytes = 0;
  };

  // |dropout|: the bodies call graph.dropout, which reads its step from
  // dropoutStep() (device memory) so that replayed graphs draw new masks.
  explicit DeviceModel(rt::ModelSpec spec, std::vector<Constant> constants = {},
                       bool dropout = false);
  ~DeviceModel() override;
  DeviceModel(const DeviceModel &) = delete;
  DeviceModel &operator=(const DeviceModel &) = delete;

  void initialize(uint64_t seed, const rt::Hyper &hyper) override;
  void beginStep(int64_t iteration) override { iteration_ = iteration; }
  // Dropout masks differ per data-parallel rank, as on the CPU target.
  // The rank is a kernel argument of the captured graphs: a new one drops
  // them.
  void setDataShard(int rank, int) override;
  void forwardBackward(const void *const *inputs, int micro) override;
  float *grad(int param) override { return g_[param]; } // device
  // Half gradients (rt::ParamInfo::gradType) are widened into grad() from
  // now on; before, with one micro-batch a step, the epilogue reads them
  // as the step left them. Call it before training: after the first step
  // it drops the captured graphs, rebuilds the epilogue (its overflow
  // counts start again) and widens what the last backward left.
  void requireFloatGrads() override;
  float *lossAccumulator() override;                    // device
  // NCCL orders the gradient all-reduce after the work queued here.
  void *computeStream() override;
  // Overlapped all-reduce: the bodies record one event per gradient at its
  // ready point (captured into the graphs as external event records);
  // forwardBackward() hands them to the hook after queueing the micro-batch.
  // Setting or clearing the hook drops the captured graphs (recaptured).
  bool setGradReadyHook(GradReadyHook hook) override;
  // grad() and lossAccumulator() are device memory (--dump-step reads them
  // here).
  void copyToHost(void *dst, const void *src, size_t bytes) override;
  rt::StepStats step(const rt::Hyper &hyper, float gradDivisor) override;
  void setStatsWanted(bool wanted) override { statsWanted_ = wanted; }
  // Overflow attribution: the flags come with the stats (one copy).
  std::vector<uint8_t> nonFiniteGrads() override { return lastFlags_; }
  std::vector<int64_t> nonFiniteCounts() override;
  void evaluate(const void *const *inputs, void *const *outputs) override;
  std::vector<rt::StateTensor> stateTensors() override;
  rt::ScalerState &scaler() override;
  int64_t &optimizerStep() override;

protected:
  // The generated bodies. Both enqueue on stream() only and never sync.
  // Forward and backward of one micro-batch (captured once for micro == 0
  // and once for micro > 0): ends with addLoss() and one storeGrad() per
  // parameter.
  virtual void runForwardBackward(int micro) = 0;
  // The forward pass (dropout off), eager; points |outputs|[i] at output i
  // in device memory.
  virtual void runEvaluate(const void **outputs) = 0;

  // What the bodies read. All device memory.
  float *weight(int param) const { return w_[param]; } // FP32 master
  // Its half copy (rt::ParamInfo::halfCopy; CompileConfig::amp's type),
  // written by the epilogue with each update.
  void *halfWeight(int param) const { return h_[param]; }
  // Buffer |k| (graph.buffer, FP32): batch_norm updates it in place.
  float *buffer(int k) const { return bufBlock_ + bufOffset_[k]; }
  void *input(int i) const { return din_[i]; }
  std::byte *arena() const { return arena_; }
  // The current loss scale, which the captured graphs read (not const: a
  // TensorRef holds a plain pointer; kernels only read it).
  float *lossScale() const;
  int64_t iteration() const { return iteration_; }

  // The loss of one micro-batch joins the device-side accumulator.
  void addLoss(const float *loss);
  void addLoss(const __half *loss);
  void addLoss(const __nv_bfloat16 *loss);
  // The FP32 gradient |g| of parameter |param|: copied on micro 0 (unless
  // |g| is grad(param) itself: the step wrote it in place), added after
  // (accumulation over micro-batches).
  void storeGrad(int param, const float *g, int micro);
  // A half gradient (rt::ParamInfo::gradType, passes/TrainHalfGrads.cpp):
  // kept in halfGrad(param) for the epilogue to widen (copied there unless
  // written in place), or, once FP32 gradients are required or with more
  // than one micro-batch, widened into grad(param) (micro-batch 0) or added
  // to it.
  void storeGrad(int param, const __half *g, int micro);
  void storeGrad(int param, const __nv_bfloat16 *g, int micro);
  // Where micro-batch 0 writes a half gradient in place
  // (passes/GradInPlace.h).
  void *halfGrad(int param) const { return hg_[param]; }
  // Parameter |param|'s gradient is final for this micro-batch (called
  // right after its last kernel): with a data-parallel hook set, records
  // its ready event on stream(). Nothing otherwise.
  void gradReady(int param) {
    if (gradHook_)
      recordGradReady(param);
  }

  // A kernel-library entry point; exits naming it when it is missing.
  static Kernel kernel(const char *name);
  // Grid size of a grid-stride loop over |n| elements, 256 threads a block.
  static int grid(int64_t n);
  template <size_t N, size_t M>
  void call(Kernel k, const TensorRef (&in)[N], const TensorRef (&out)[M],
            const Attrs &attrs) {
    k(std::span<const TensorRef>(in, N), std::span<const TensorRef>(out, M),
      attrs, stream_);
  }

  cudaStream_t stream() const { return stream_; } // every kernel of a step
  uint64_t seed() const { return seed_; }            // dropout masks
  int64_t shard() const { return shard_; } // data-parallel rank (dropout)
  // Dropout's step, in device memory: replayed graphs read it there.
  int64_t *dropoutStep() const { return dropStep_; }
  void *constant(int i) const { return constants_[i]; } // device copy

private:
  void setup();
  // Runs |body| eagerly the first time (warm-up), captures it into a graph
  // the second time, and replays the graph from then on.
  void replay(cudaGraphExec_t &exec, int &runs,
              const std::function<void()> &body);
  void recordGradReady(int param);
  void uploadTensors();
  void downloadTensors();
  void downloadState();
  void uploadIfPending();
  void castHalfCopies();
  void storeHalfGrad(int param, const void *g, int micro, bool bf16);
  // The epilogue over the current gradient buffers (half or FP32).
  void makeEpilogue();
  bool sgd() const { return spec_.config.optimizer == "sgd"; }

  std::vector<Constant> hostConstants_;
  bool dropout_ = false;
  // Parameter blocks: element offsets of each tensor (multiples of 64
  // floats, 256 bytes) and their total.
  std::vector<int64_t> offset_;
  int64_t total_ = 0;
  std::vector<size_t> inputBytes_, outputBytes_;

  bool ready_ = false, tensorsOut_ = false, stateOut_ = false,
       statsWanted_ = true;
  std::vector<float *> w_, g_, m_, v_;
  // Half weight copies (one block; element offsets, 128-element aligned).
  std::vector<void *> h_;
  std::vector<int64_t> halfOffset_;
  int64_t halfTotal_ = 0;
  void *halfBlock_ = nullptr;
  float *blocks_[4] = {};
  // Half gradients (rt::ParamInfo::gradType): one block, element offsets
  // 128-element aligned. floatGrads_: they are widened into g_ (more than
  // one micro-batch, or requireFloatGrads()), else the epilogue reads them.
  std::vector<void *> hg_;
  std::vector<int64_t> halfGradOffset_;
  int64_t halfGradTotal_ = 0;
  void *halfGradBlock_ = nullptr;
  bool floatGrads_ = false;
  std::vector<float> hostW_, hostM_, hostV_;
  // Buffers (spec_.buffers): one block, staged with the parameters.
  std::vector<int64_t> bufOffset_;
  int64_t bufTotal_ = 0;
  float *bufBlock_ = nullptr;
  std::vector<float> hostBuf_;
  DeviceState *state_ = nullptr;
  DeviceState hostState_;
  // hostState_ as downloaded: a host copy handed out but not written (the
  // trainer reads scaler() at every log step) goes back without an upload
  // and a device-wide sync.
  DeviceState downloadedState_;
  unsigned char *pinnedReport_ = nullptr; // Epilogue::report(), copied
  rt::StepStats lastStats_;
  std::vector<uint8_t> lastFlags_; // non-finite gradients of lastStats_' step
  std::byte *arena_ = nullptr;
  std::vector<void *> din_, hin_[2];
  int slot_ = 0;
  cudaStream_t copyStream_ = nullptr;
  cudaEvent_t copied_[2] = {}, consumed_ = nullptr, stepDone_ = nullptr;
  cudaGraphExec_t fbExec_[2] = {}, stepExec_ = nullptr;
  int fbRuns_[2] = {}, stepRuns_ = 0;
  // Destroys the forward+backward graphs (after the stream's work): the
  // next calls warm up and capture again, with the current seed, rank and
  // gradient hook.
  void dropForwardBackwardGraphs();
  std::unique_ptr<Epilogue> epilogue_;
  int64_t iteration_ = 0;
  int64_t dropStepNext_ = -1; // what dropStep_ holds next
  cudaStream_t stream_ = nullptr;
  uint64_t seed_ = 0;
  int64_t shard_ = 0;
  int64_t *dropStep_ = nullptr;
  std::vector<void *> constants_;
  // Data-parallel overlap (setGradReadyHook): one event per parameter, and
  // per graph (micro == 0, micro > 0) which parameters the body marks.
  GradReadyHook gradHook_;
  std::vector<cudaEvent_t> readyEvents_;
  std::vector<uint8_t> marked_[2];
  int bodySlot_ = 0; // the graph whose body runs
};

} // namespace ampc::cuda

#endif
