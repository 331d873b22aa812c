//===- Activation.h - ReLU and GELU, host and device ------------*- C++ -*-===//
//
// The one definition of the activation formulas that are not a single libm
// call: the kernel libraries (runtime/cpu, runtime/cuda), the fused loops
// and kernels the emitters print, and anything else that evaluates them in
// float include this header. PyTorch's formulas (GeluKernel, GeluBackward),
// evaluated in float operation by operation.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_ACTIVATION_H
#define AMPC_RUNTIME_NUMERICS_ACTIVATION_H

#include <cmath>

#ifdef __CUDACC__
#define AMPC_HD __host__ __device__
#else
#define AMPC_HD
#endif

namespace ampc::num {

inline constexpr float kSqrtHalf = 0.70710678118654752440f;    // 1/sqrt(2)
inline constexpr float kSqrt2OverPi = 0.79788456080286535588f; // sqrt(2/pi)
inline constexpr float kInvSqrt2Pi = 0.39894228040143267794f;  // 1/sqrt(2 pi)
inline constexpr float kGeluKappa = 0.044715f;

// max(x, 0) that keeps NaN (torch.relu propagates it): x > 0 or NaN gives x.
AMPC_HD inline float relu(float x) { return !(x <= 0.0f) ? x : 0.0f; }

// gelu(approximate="none"): x * Phi(x).
AMPC_HD inline float geluErf(float x) {
  return 0.5f * x * (1.0f + erff(x * kSqrtHalf));
}

// gelu(approximate="tanh").
AMPC_HD inline float geluTanh(float x) {
  float inner = kSqrt2OverPi * (x + kGeluKappa * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

// g * gelu'(x), approximate="none".
AMPC_HD inline float geluErfGrad(float x, float g) {
  float cdf = 0.5f * (1.0f + erff(x * kSqrtHalf));
  float pdf = kInvSqrt2Pi * expf(-0.5f * x * x);
  return g * (cdf + x * pdf);
}

// g * gelu'(x), approximate="tanh".
AMPC_HD inline float geluTanhGrad(float x, float g) {
  float x2 = x * x;
  float inner = kSqrt2OverPi * (x + kGeluKappa * x2 * x);
  float t = tanhf(inner);
  float left = 0.5f * x, right = 1.0f + t;
  float dleft = 0.5f * right;
  float dright =
      left * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluKappa * x2);
  return g * (dleft + dright);
}

} // namespace ampc::num

#endif
