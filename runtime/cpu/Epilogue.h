//===- Epilogue.h - AMP epilogue helpers for generated CPU code -*- C++ -*-===//
//
// The per-step tail of training on FP32 master gradients and weights:
// unscale + non-finite check + global norm, clipping and the optimizer
// updates, each mirroring PyTorch's formulas operation by operation in
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

#include <cstdint>
#include <span>

namespace ampc::cpu {

// One FP32 gradient (or parameter) buffer.
struct GradBuffer {
  float *data;
  int64_t size;
};

// GradScaler's inverse scale: float(1 / double(scale)).
float inverseScale(float scale);

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
// norm of the results. The norm is meaningless when foundInf.
UnscaleResult unscaleCheckAndNorm(std::span<const GradBuffer> grads,
                                  float invScale);

// The same without the norm.
bool unscaleAndCheck(std::span<const GradBuffer> grads, float invScale);

// clip_grad_norm_'s coefficient in float ops as torch evaluates them:
// clamp(reciprocal(norm + 1e-6) * max_norm, max = 1) (NaN propagates).
// Equals min(1, max_norm / (norm + 1e-6)) up to the division's rounding.
float clipCoefficient(float norm, double maxNorm);

// grads *= coef (clip_grad_norm_ always multiplies, even by 1).
void scaleGrads(std::span<const GradBuffer> grads, float coef);

// Clip by norm given the precomputed total norm; returns the coefficient.
float clipGradNorm(std::span<const GradBuffer> grads, float norm,
                   double maxNorm);

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

} // namespace ampc::cpu

#endif
