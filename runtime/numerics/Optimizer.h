//===- Optimizer.h - SGD and Adam/AdamW, one element at a time --*- C++ -*-===//
//
// The one definition of the optimizer updates, shared by the CPU epilogue
// (runtime/cpu/Epilogue.cpp) and the device epilogue (runtime/cuda/
// Epilogue.cu). PyTorch's single-tensor formulas (torch.optim.SGD, Adam,
// AdamW), evaluated operation by operation in float (each multiply and add
// rounded on its own on the device too: Rounded.h); the per-step scalars
// are Python floats in torch, so they are computed in double and rounded
// once where torch hands them to a float kernel.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_OPTIMIZER_H
#define AMPC_RUNTIME_NUMERICS_OPTIMIZER_H

#include "runtime/numerics/HostDevice.h"
#include "runtime/numerics/Rounded.h"

#include <cmath>
#include <cstdint>

namespace ampc::num {

// torch.optim.SGD's scalars for one step.
struct SgdCoeffs {
  float wd = 0, mom = 0, damp = 1, negLr = 0;
  bool nesterov = false;
};

AMPC_HD inline SgdCoeffs sgdCoeffs(double lr, double momentum,
                                   double dampening, double weightDecay,
                                   bool nesterov) {
  SgdCoeffs c;
  c.wd = float(weightDecay);
  c.mom = float(momentum);
  c.damp = float(1.0 - dampening);
  c.negLr = float(-lr);
  c.nesterov = nesterov;
  return c;
}

// One element: returns the new parameter and updates the momentum buffer
// |buf| (torch's None on the first step: it becomes the decayed gradient).
AMPC_HD inline float sgdUpdate(float p, float g, float &buf,
                               const SgdCoeffs &c, bool firstStep) {
  float d = g;
  if (c.wd != 0.0f)
    d = addRn(d, mulRn(c.wd, p)); // grad.add(param, alpha=weight_decay)
  if (c.mom != 0.0f) {
    // First step: torch.clone(d_p); then buf.mul_(momentum).add_(d_p,
    // alpha=1 - dampening).
    float b = firstStep ? d : addRn(mulRn(buf, c.mom), mulRn(c.damp, d));
    buf = b;
    d = c.nesterov ? addRn(d, mulRn(c.mom, b)) : b;
  }
  return addRn(p, mulRn(c.negLr, d)); // param.add_(d_p, alpha=-lr)
}

// torch.optim.Adam / AdamW's scalars for step number |step| (1 first).
struct AdamCoeffs {
  float negStepSize = 0, bc2Sqrt = 1;
  float w1 = 0, b2 = 0, w2 = 0, eps = 0, wd = 0, decay = 1;
  bool smallW1 = true, decoupled = false;
};

AMPC_HD inline AdamCoeffs adamCoeffs(double lr, double beta1, double beta2,
                                     double eps, double weightDecay,
                                     bool decoupled, int64_t step) {
  AdamCoeffs c;
  double bc1 = 1.0 - ::pow(beta1, double(step));
  double bc2 = 1.0 - ::pow(beta2, double(step));
  c.negStepSize = float(-(lr / bc1));
  c.bc2Sqrt = float(::sqrt(bc2));
  c.w1 = float(1.0 - beta1);
  c.b2 = float(beta2);
  c.w2 = float(1.0 - beta2);
  c.eps = float(eps);
  c.wd = float(weightDecay);
  c.decay = float(1.0 - lr * weightDecay);
  c.smallW1 = ::fabsf(c.w1) < 0.5f;
  c.decoupled = decoupled;
  return c;
}

// One element: returns the new parameter and updates the moments |m| and
// |v|.
AMPC_HD inline float adamUpdate(float p, float g, float &m, float &v,
                                const AdamCoeffs &c) {
  if (c.wd != 0.0f) {
    if (c.decoupled)
      p = mulRn(p, c.decay); // param.mul_(1 - lr * weight_decay)
    else
      g = addRn(g, mulRn(c.wd, p)); // grad.add(param, alpha=weight_decay)
  }
  // exp_avg.lerp_(grad, 1 - beta1), ATen's two-branch lerp.
  float mi = m;
  mi = c.smallW1 ? addRn(mi, mulRn(c.w1, subRn(g, mi)))
                 : subRn(g, mulRn(subRn(g, mi), subRn(1.0f, c.w1)));
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
  float vi = mulRn(v, c.b2);
  vi = addRn(vi, mulRn(mulRn(c.w2, g), g));
  // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
  float denom = addRn(::sqrtf(vi) / c.bc2Sqrt, c.eps);
  m = mi;
  v = vi;
  // param.addcdiv_(exp_avg, denom, value=-step_size)
  return addRn(p, mulRn(c.negStepSize, mi) / denom);
}

} // namespace ampc::num

#endif
