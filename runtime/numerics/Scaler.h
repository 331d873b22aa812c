//===- Scaler.h - Dynamic loss scaling and clip coefficients ----*- C++ -*-===//
//
// The one definition of the loss-scale state machine, the unscale factor and
// the clip coefficient, shared by the generated CPU code, CUDA kernels (every
// function is AMPC_HD), the runtime and the reference interpreter.
//
// With hysteresis == 1, minScale == 0 and maxScale == +inf (or any value the
// scale never reaches) updateLossScale is exactly PyTorch's
// `torch._amp_update_scale_`:
//
//   on found_inf: scale *= backoff; tracker = 0
//   else:         tracker += 1
//                 if tracker == interval:
//                   new = scale * growth; if finite(new): scale = new
//                   tracker = 0
//
// Hysteresis follows Megatron-LM's DynamicGradScaler.update():
//   on found_inf: tracker = 0; hysteresisLeft -= 1;
//                 if hysteresisLeft <= 0: scale = max(scale*backoff, minScale)
//   on growth:    hysteresisLeft = hysteresis  (refilled only here)
// So the counter is NOT refilled by a clean step: with H = 2, two overflows
// anywhere between two growths back off once (on the second), and every
// further overflow before the next growth backs off again. (DeepSpeed calls
// this consecutive_hysteresis=False.) The refill happens whenever the
// tracker reaches the interval, even when the grown scale is not finite or
// is clamped by maxScale.
//
// Clamps: backoff never goes below minScale, growth never above maxScale
// (scale = min(new, maxScale)). A found_inf step also counts one skipped
// step (updateScaler).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_SCALER_H
#define AMPC_RUNTIME_NUMERICS_SCALER_H

#include "runtime/numerics/HostDevice.h"

#include <cstdint>

namespace ampc::num {

struct LossScaleParams {
  float growthFactor = 2.0f;
  float backoffFactor = 0.5f;
  int32_t growthInterval = 2000;
  int32_t hysteresis = 1;
  float minScale = 0.0f;
  float maxScale = 3.4028234663852886e38f; // FLT_MAX: no clamp
};

// True for a finite float, without <cmath> so it compiles for the device.
AMPC_HD inline bool isFiniteFloat(float x) {
  return x - x == 0.0f; // inf - inf and NaN - NaN are NaN
}

// One update of the dynamic loss scale after a step that saw |foundInf|.
AMPC_HD inline void updateLossScale(float &scale, int32_t &growthTracker,
                                    int32_t &hysteresisLeft, bool foundInf,
                                    const LossScaleParams &p) {
  if (foundInf) {
    growthTracker = 0;
    hysteresisLeft -= 1;
    if (hysteresisLeft <= 0) {
      hysteresisLeft = 0;
      float s = scale * p.backoffFactor;
      scale = s < p.minScale ? p.minScale : s;
    }
    return;
  }
  growthTracker += 1;
  if (growthTracker == p.growthInterval) {
    float grown = scale * p.growthFactor;
    if (isFiniteFloat(grown))
      scale = grown > p.maxScale ? p.maxScale : grown;
    growthTracker = 0;
    hysteresisLeft = p.hysteresis;
  }
}

// The same on a state struct with scale/growthTracker/hysteresisLeft/
// skippedSteps members (ampc::rt::ScalerState), counting skipped steps.
template <class State>
AMPC_HD inline void updateScaler(State &s, bool foundInf,
                                 const LossScaleParams &p) {
  updateLossScale(s.scale, s.growthTracker, s.hysteresisLeft, foundInf, p);
  if (foundInf)
    s.skippedSteps += 1;
}

// PyTorch: inv_scale = scale.double().reciprocal().float().
AMPC_HD inline float invScale(float scale) {
  return float(1.0 / double(scale));
}

// PyTorch clip_grad_norm_: clip_coef = max_norm / (total_norm + 1e-6),
// clamped to at most 1. `float / Tensor` is Tensor.__rdiv__, which computes
// reciprocal(t) * float, so the float arithmetic is exactly this (it can
// differ from a plain division in the last bit).
AMPC_HD inline float clipCoef(float maxNorm, float totalNorm) {
  float coef = (1.0f / (totalNorm + 1e-6f)) * maxNorm;
  return coef > 1.0f ? 1.0f : coef; // torch.clamp keeps a NaN
}

} // namespace ampc::num

#endif
