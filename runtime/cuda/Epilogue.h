//===- Epilogue.h - The fused AMP epilogue on the device --------*- C++ -*-===//
//
// Two multi-tensor kernels over every parameter, nothing read back by the
// host:
//   pass 1  reads each gradient once: unscale (by inv_scale, or by
//           1/(scale * gradDivisor) after accumulation/all-reduce), the
//           non-finite flag, per-chunk sums of squares. The last block to
//           finish (a device-wide counter) finalises, in a fixed order: per
//           tensor norms, the global norm (torch foreach clip_grad_norm_:
//           sqrt of the sum of squared per-tensor norms), the clip
//           coefficient (num::clipCoef), the skip flag, the step counter,
//           Adam's bias corrections, the scaler update and halting
//           (num::finishStep) and the step's statistics. Once
//           scaler.halted is set, the finaliser sets skip and changes
//           nothing else (num::refuseStep): the device refuses every later
//           step on its own, with no host sync; the host sees `halted` in
//           the stats it reads at log steps (they stay the halting step's).
//   pass 2  unless the step is skipped (or refused): reads the gradient again, unscales,
//           clips, applies SGD / Adam / AdamW to the FP32 master (PyTorch's
//           formulas, runtime/numerics/Optimizer.h) and writes
//           the half copy of the weight for the next forward.
//
// Bytes per parameter, AdamW, half gradients, half weight copy written:
//   pass 1: grad 2; pass 2: grad 2 + param 4 + exp_avg 4 + exp_avg_sq 4
//   read, param 4 + exp_avg 4 + exp_avg_sq 4 + half copy 2 written = 30 B.
//   (FP32 gradients: 36 B; without the half copy: 2 B less.)
//
// Overflow attribution: pass 1 also ORs each chunk's non-finite flag into
// its tensor's flag; the finaliser copies the flags into the step report
// (the statistics followed by one byte per tensor, which the host copies to
// pinned memory in the one copy it already makes for the statistics, and
// reads only at log steps) and counts, per tensor, the steps it was
// non-finite in (read at the end of a run). Then it clears the flags.
//
// Memory access: each pass is a grid sized to the device (SM count x the
// blocks per SM the kernel can keep resident) looping over the chunks
// (grid-stride). Where every tensor is 16-byte aligned (checked when the
// epilogue is built) a thread moves groups of 4 elements: one 16-byte
// access for FP32, one 8-byte access for half; thread t takes groups t,
// t + blockDim, ..., so each warp access is one contiguous span, and it
// loads EpilogueOptions' groups (pass 1: 4, pass 2: 2) before it uses any;
// a chunk's last len % 4 elements go one by one. (Eight contiguous elements
// a thread, two float4 for FP32, left every sector half-used per access:
// 2.33 TB/s on an H200 against 3.66 now, at 30 B/param, 86% of its copy
// bandwidth.) Otherwise, or with AMPC_CUDA_EPILOGUE=scalar, every access
// is one element. The updates are the same per element either way; only
// the order of a chunk's sum of squares differs (which thread adds what).
//
// Determinism: chunk partial sums are block sums in a fixed order; the
// finaliser combines a tensor's with one warp (lane l adds chunks l, l+32,
// ... in order, then a butterfly) and the tensors' squared norms the same
// way, so the norm is the same run to run and for any grid size (it is not
// bit-equal to the CPU target's pairwise order).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_EPILOGUE_H
#define AMPC_RUNTIME_CUDA_EPILOGUE_H

#include "runtime/Model.h"
#include "runtime/kernels/EpilogueConfig.h"
#include "runtime/numerics/Optimizer.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace ampc::cuda {

// Everything the epilogue reads and writes besides the tensors, kept in
// device memory for the whole run. Plain data: the host copies it in and
// out (at log steps, checkpoints, resume) with cudaMemcpy.
struct DeviceState {
  rt::ScalerState scaler;     // scale, growthTracker, hysteresisLeft, skipped
  int64_t step = 0;           // optimizer steps taken (not skipped ones)
  float lossAccumulator = 0;  // forward adds each micro-batch's loss here
  rt::StepStats stats;        // the last step's statistics
  // Per-step inputs, set by setStepInputs() before the step runs.
  rt::Hyper hyper;
  float gradDivisor = 1;
  // Finalised by pass 1 for pass 2.
  float invScale = 1, clipCoef = 1;
  int32_t skip = 0, firstStep = 0;
  num::AdamCoeffs adam;  // this step's Adam scalars
  uint32_t blocksDone = 0; // pass 1's completion counter (back to 0 after)
};

// One parameter: gradient (of gradType: FP32, or a half gradient the step
// returned, passes/TrainHalfGrads.cpp), FP32 master, moments (exp_avg or
// the momentum buffer; exp_avg_sq), the optional half copy (halfType).
struct EpilogueTensor {
  const void *grad = nullptr;
  float *param = nullptr;
  float *m = nullptr;
  float *v = nullptr;
  void *half = nullptr;
  int64_t n = 0;
  rt::DType gradType = rt::DType::F32;
};

using kernels::EpilogueConfig;

// How the passes run (tests and A/B timing; the defaults are the fast path).
struct EpilogueOptions {
  // Packed accesses when every tensor is aligned; false: element accesses.
  // AMPC_CUDA_EPILOGUE=scalar (read once) turns them off for every epilogue.
  bool packed = true;
  // At most this many blocks per pass (0: SM count x resident blocks).
  int maxBlocks = 0;
  // Groups of four elements a thread loads before it uses any, per pass
  // (pass 1: 1, 2, 4 or 8; pass 2: 1, 2 or 4), and whether pass 2's
  // accesses are marked streaming (evict first). The same results for all.
  int pass1Groups = 4, pass2Groups = 2;
  bool streaming = false;
};

class Epilogue {
public:
  // Builds the chunk table in device memory (call outside stream capture).
  Epilogue(std::vector<EpilogueTensor> tensors, EpilogueConfig config,
           EpilogueOptions options = {});
  ~Epilogue();
  Epilogue(const Epilogue &) = delete;
  Epilogue &operator=(const Epilogue &) = delete;

  // Enqueues the two kernels on |stream|.
  void run(DeviceState *state, cudaStream_t stream) const;

  // The step report in device memory: a copy of the last step's
  // DeviceState::stats (kept, like them, while a halted epilogue refuses
  // steps) at offset 0, then one byte per tensor at kReportFlags, 1 when
  // that tensor's gradient held inf or NaN.
  const void *report() const { return report_; }
  size_t reportBytes() const { return kReportFlags + size_t(numTensors_); }
  static constexpr size_t kReportFlags = (sizeof(rt::StepStats) + 7) & ~size_t(7);
  // Per tensor: the steps since construction its gradient held inf or NaN
  // in. Waits for |stream|.
  std::vector<int64_t> nonFiniteCounts(cudaStream_t stream) const;
  // Zeroes the flags and counts (synchronous; a new run).
  void clearAttribution();

  int64_t numParams() const { return numel_; }
  int numChunks() const { return numChunks_; }
  // Whether the passes take packed accesses, and their grids.
  bool packed() const { return packed_; }
  int pass1Blocks() const { return blocks1_; }
  int pass2Blocks() const { return blocks2_; }

private:
  EpilogueConfig config_;
  int numTensors_ = 0, numChunks_ = 0;
  bool packed_ = false;
  int blocks1_ = 0, blocks2_ = 0;
  const void *pass1_ = nullptr, *pass2_ = nullptr; // the kernels options chose
  int64_t numel_ = 0;
  void *table_ = nullptr;   // device: tensors, chunks
  float *partials_ = nullptr; // device: per-chunk sums, per-tensor norms
  int32_t *flags_ = nullptr;   // device: per-tensor non-finite flags
  int64_t *counts_ = nullptr;  // device: per-tensor non-finite steps
  unsigned char *report_ = nullptr; // device: see report()
};

// The stats and non-finite flags of a step report copied to the host.
rt::StepStats reportStats(const void *hostReport);
std::vector<uint8_t> reportFlags(const void *hostReport, int numTensors);

// Enqueues a tiny kernel that stores the step's hyperparameters and the
// gradient divisor into |state| (kernel arguments, so the host values may
// change right after: no pinned staging, capture-safe).
void setStepInputs(DeviceState *state, const rt::Hyper &hyper,
                   float gradDivisor, cudaStream_t stream);

// Elements per chunk of the multi-tensor kernels.
inline constexpr int64_t kEpilogueChunk = 65536;

} // namespace ampc::cuda

#endif
