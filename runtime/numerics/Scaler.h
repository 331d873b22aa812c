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
// Halting (finishStep, what the epilogues call): PyTorch lets a long run of
// overflows back the scale off to 0, and the next clean step is applied with
// inv_scale = inf: every weight becomes NaN. Here the state machine stops
// instead, on the skipped step itself, so no weight is ever touched by an
// unusable scale:
//   - scale floor: a backoff that would set a scale below scaleFloor (or 0,
//     or NaN) halts, and the scale stays at its last usable value. minScale
//     is a clamp the run continues at; scaleFloor is where it stops (a
//     minScale >= scaleFloor keeps the run going, only the next rule can
//     stop it);
//   - maxConsecutiveSkips (> 0): that many skipped steps in a row, with any
//     kind of loss scaling or none, halt.
// Once halted the epilogue refuses every further step (refuseStep): no
// update, no scaler change. The device keeps deciding on its own; the host
// sees `halted` with the stats it reads at log steps.
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
  // finishStep only (0: off; the runtime's defaults are in HyperParams.def).
  float scaleFloor = 0.0f;         // halt when a backoff would go below
  int32_t maxConsecutiveSkips = 0; // halt after this many skips in a row
};

// Why finishStep halted (ScalerState::halted).
enum HaltReason : int32_t {
  kNotHalted = 0,
  kHaltScaleFloor = 1,        // the scale would fall below scaleFloor
  kHaltConsecutiveSkips = 2,  // maxConsecutiveSkips skipped steps in a row
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

// The end of one optimizer step that saw |foundInf| (the step is skipped
// then), on a state with the members of ampc::rt::ScalerState: counts
// skips, updates the scale when |dynamic|, and halts (see above). A step
// that halts is a skipped one, so it changed no weight either.
template <class State>
AMPC_HD inline void finishStep(State &s, bool foundInf, bool dynamic,
                               const LossScaleParams &p) {
  if (!foundInf) {
    s.consecutiveSkips = 0;
    if (dynamic)
      updateLossScale(s.scale, s.growthTracker, s.hysteresisLeft, false, p);
    return;
  }
  s.skippedSteps += 1;
  s.consecutiveSkips += 1;
  if (dynamic) {
    float scale = s.scale;
    int32_t tracker = s.growthTracker, left = s.hysteresisLeft;
    updateLossScale(scale, tracker, left, true, p);
    if (scale != s.scale && !(scale >= p.scaleFloor && scale > 0.0f)) {
      s.halted = kHaltScaleFloor;
      s.haltScale = scale; // what the backoff would have set
      return;
    }
    s.scale = scale;
    s.growthTracker = tracker;
    s.hysteresisLeft = left;
  }
  if (p.maxConsecutiveSkips > 0 && s.consecutiveSkips >= p.maxConsecutiveSkips) {
    s.halted = kHaltConsecutiveSkips;
    s.haltScale = s.scale;
  }
}

// A step after the halt: nothing changes but the count of refused steps.
template <class State> AMPC_HD inline void refuseStep(State &s) {
  s.refusedSteps += 1;
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
