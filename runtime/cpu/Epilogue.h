//===- Epilogue.h - The fused AMP epilogue on the host ----------*- C++ -*-===//
//
// The per-step tail of training on FP32 master gradients and weights, the
// host twin of runtime/cuda/Epilogue.h: cpu::Epilogue::run() unscales,
// checks for inf/NaN, takes the global norm, clips, applies SGD / Adam /
// AdamW unless the step overflowed and updates the loss scale. The helpers
// it is built from are public for the tests and the CUDA target's reference
// checks; each mirrors PyTorch's formulas operation by operation in
// float (scalars computed in double as Python does, then rounded to float
// where PyTorch passes them to a float kernel). No operation is fused
// (this library builds with -ffp-contract=off).
//
// Summation order (documented because it is part of the result): a tensor's
// sum of squares is a pairwise sum of 256-element blocks, each summed left
// to right in float; the global norm is the L2 norm of the stacked
// per-tensor norms, summed in tensor order (torch.nn.utils.clip_grad_norm_,
// foreach path: torch._foreach_norm, then vector_norm of the stack).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_EPILOGUE_H
#define AMPC_RUNTIME_CPU_EPILOGUE_H

#include "runtime/Model.h"
#include "runtime/kernels/EpilogueConfig.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ampc::cpu {

// One FP32 gradient (or parameter) buffer.
struct GradBuffer {
  float *data;
  int64_t size;
};

// Deterministic float sum of squares of one buffer (see above).
float sumOfSquares(const float *x, int64_t n);

// clip_grad_norm_'s total L2 norm: sqrt of the sum (in tensor order) of the
// squared per-tensor norms sqrt(sumOfSquares(t)).
float globalNorm(std::span<const GradBuffer> grads);

struct UnscaleResult {
  bool foundInf; // some gradient element was inf or NaN before unscaling
  float norm;    // globalNorm of the unscaled gradients
};

// torch._amp_foreach_non_finite_check_and_unscale_ (each element is checked,
// then multiplied by invScale unless invScale == 1), fused with the global
// norm of the results. The norm is meaningless when foundInf. When given,
// |nonFinite|[k] (one per buffer) is set to whether buffer k held an inf or
// NaN: the per-tensor flags found_inf is the OR of (overflow attribution).
UnscaleResult unscaleCheckAndNorm(std::span<const GradBuffer> grads,
                                  float invScale,
                                  std::span<uint8_t> nonFinite = {});

// The same without the norm.
bool unscaleAndCheck(std::span<const GradBuffer> grads, float invScale);

// grads *= coef (clip_grad_norm_ always multiplies, even by 1).
void scaleGrads(std::span<const GradBuffer> grads, float coef);

// Clip by norm given the precomputed total norm; returns the coefficient
// (num::clipCoef, runtime/numerics/Scaler.h).
float clipGradNorm(std::span<const GradBuffer> grads, float norm,
                   float maxNorm);

// clip_grad_value_: clamp each element to [-clip, clip] (clip as float).
void clipGradValue(std::span<const GradBuffer> grads, double clip);

// torch.optim.SGD, single-tensor path.
struct SgdOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weightDecay = 0;
  bool nesterov = false;
};

// One parameter tensor of n elements. |momentumBuf| is unused when momentum
// is 0. |firstStep|: the buffer is torch's None and is set to the (weight
// decayed) gradient rather than updated.
void sgdStep(float *param, const float *grad, float *momentumBuf, int64_t n,
             const SgdOptions &opt, bool firstStep);

// torch.optim.Adam / AdamW, single-tensor path (no amsgrad, no maximize).
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0;
  bool decoupled = false; // AdamW: p *= 1 - lr*wd; Adam: g += wd*p
};

// |step| is the step count after this update's increment (1 first).
void adamStep(float *param, const float *grad, float *expAvg, float *expAvgSq,
              int64_t n, const AdamOptions &opt, int64_t step);

// Everything the epilogue reads and writes besides the tensors: the
// counterpart of cuda::DeviceState, in host memory.
struct HostState {
  rt::ScalerState scaler;    // scale, growthTracker, hysteresisLeft, skipped
  int64_t step = 0;          // optimizer steps taken (not skipped ones)
  float lossAccumulator = 0; // forward adds each micro-batch's loss here
  // Overflow attribution, one entry per tensor (sized by the first run()):
  // whether its gradient held inf/NaN in the last step run() took (a
  // refused step keeps the halting step's, like the stats), and in how many
  // steps since the state was made it did (each such step was skipped).
  std::vector<uint8_t> nonFinite;
  std::vector<int64_t> nonFiniteSteps;
};

// One parameter: FP32 gradient, FP32 master, moments (exp_avg or the
// momentum buffer; exp_avg_sq, unused by SGD), and the optional half copy
// of the master (EpilogueConfig::halfType) an update also writes.
struct EpilogueTensor {
  float *grad = nullptr;
  float *param = nullptr;
  float *m = nullptr;
  float *v = nullptr;
  int64_t n = 0;
  void *half = nullptr;
};

// half[i] = the F16 or BF16 rounding of src[i] (round to nearest even, the
// graph.cast the copy replaces).
void castToHalf(const float *src, void *half, int64_t n, rt::DType type);

// What train.fused_epilogue fixed at compile time (shared with the device).
using kernels::EpilogueConfig;

class Epilogue {
public:
  Epilogue(std::vector<EpilogueTensor> tensors, EpilogueConfig config);

  // One optimizer step over gradients of loss * scale summed over
  // |gradDivisor| micro-batches (times ranks): unscale, check, norm, clip,
  // update unless a gradient was inf/NaN, scaler update and halting
  // (num::finishStep); once |state|.scaler.halted, every call is refused
  // and changes nothing but the refused count. Takes the step's loss out of
  // |state|.lossAccumulator.
  rt::StepStats run(HostState &state, const rt::Hyper &hyper,
                    float gradDivisor) const;

  const EpilogueConfig &config() const { return config_; }

private:
  void update(HostState &state, const rt::Hyper &hyper) const;
  void writeHalfCopies() const;

  std::vector<EpilogueTensor> tensors_;
  std::vector<GradBuffer> grads_; // tensors_[i].grad, for the helpers
  EpilogueConfig config_;
};

} // namespace ampc::cpu

#endif
