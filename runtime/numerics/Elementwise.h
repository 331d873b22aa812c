//===- Elementwise.h - Scalar formulas of the elementwise ops ---*- C++ -*-===//
//
// The one definition of every elementwise formula that is more than a single
// C operator or libm call: the kernel libraries (runtime/cpu, runtime/cuda),
// the fused loops and kernels the emitters print (they print calls to these
// functions), and the reference interpreter include this header.
// Activations follow PyTorch (GeluKernel, GeluBackward).
//
// Each formula is a template on the scalar type, evaluated operation by
// operation in that type. float is what the kernels and generated code run
// (the same operations, in the same order, as the formulas they replaced, so
// no float result changed); double is the interpreter's FP64 reference
// (compiler/interp), which thus evaluates the same definition. Constants are
// double and converted to T: the static_asserts below check that each one
// rounds to the float literal the kernels used before.
//
// Keep these single expressions without fused multiply-adds in the source:
// the CPU kernel library and generated CPU code are compiled with
// -ffp-contract=off, so the host evaluates each operation as written; nvcc
// contracts device code (both runtime/cuda and generated kernels), the same
// way for the same expression.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_ELEMENTWISE_H
#define AMPC_RUNTIME_NUMERICS_ELEMENTWISE_H

#include "runtime/numerics/HostDevice.h"

#include <cmath>

namespace ampc::num {

// libm by scalar type: float calls the f-suffixed C functions (the CUDA
// device functions under nvcc), double the plain ones.
namespace math {
AMPC_HD inline float exp(float x) { return ::expf(x); }
AMPC_HD inline double exp(double x) { return ::exp(x); }
AMPC_HD inline float sqrt(float x) { return ::sqrtf(x); }
AMPC_HD inline double sqrt(double x) { return ::sqrt(x); }
AMPC_HD inline float tanh(float x) { return ::tanhf(x); }
AMPC_HD inline double tanh(double x) { return ::tanh(x); }
AMPC_HD inline float erf(float x) { return ::erff(x); }
AMPC_HD inline double erf(double x) { return ::erf(x); }
AMPC_HD inline float pow(float x, float e) { return ::powf(x, e); }
AMPC_HD inline double pow(double x, double e) { return ::pow(x, e); }
} // namespace math

inline constexpr double kSqrtHalf = 0.70710678118654752440;    // 1/sqrt(2)
inline constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2/pi)
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
inline constexpr double kGeluKappa = 0.044715;
static_assert(float(kSqrtHalf) == 0.70710678118654752440f &&
              float(kSqrt2OverPi) == 0.79788456080286535588f &&
              float(kInvSqrt2Pi) == 0.39894228040143267794f &&
              float(kGeluKappa) == 0.044715f);

// max(x, 0) that keeps NaN (torch.relu propagates it): x > 0 or NaN gives x.
template <class T> AMPC_HD inline T relu(T x) {
  return !(x <= T(0)) ? x : T(0);
}

// relu_backward: g where x > 0, else 0 (NaN x gives 0, as torch's
// threshold_backward).
template <class T> AMPC_HD inline T reluGrad(T x, T g) {
  return x > T(0) ? g : T(0);
}

// 1 / (1 + exp(-x)).
template <class T> AMPC_HD inline T sigmoid(T x) {
  return T(1) / (T(1) + math::exp(-x));
}

// 1 / sqrt(x) (a division, not an approximate reciprocal square root).
template <class T> AMPC_HD inline T rsqrt(T x) {
  return T(1) / math::sqrt(x);
}

// x ** e; the square exactly (x * x), as torch special-cases it. With a
// constant exponent (generated code) the test folds away.
template <class T> AMPC_HD inline T power(T x, T e) {
  return e == T(2) ? x * x : math::pow(x, e);
}

// gelu(approximate="none"): x * Phi(x).
template <class T> AMPC_HD inline T geluErf(T x) {
  return T(0.5) * x * (T(1) + math::erf(x * T(kSqrtHalf)));
}

// gelu(approximate="tanh").
template <class T> AMPC_HD inline T geluTanh(T x) {
  T inner = T(kSqrt2OverPi) * (x + T(kGeluKappa) * x * x * x);
  return T(0.5) * x * (T(1) + math::tanh(inner));
}

// g * gelu'(x), approximate="none".
template <class T> AMPC_HD inline T geluErfGrad(T x, T g) {
  T cdf = T(0.5) * (T(1) + math::erf(x * T(kSqrtHalf)));
  T pdf = T(kInvSqrt2Pi) * math::exp(T(-0.5) * x * x);
  return g * (cdf + x * pdf);
}

// g * gelu'(x), approximate="tanh".
template <class T> AMPC_HD inline T geluTanhGrad(T x, T g) {
  T x2 = x * x;
  T inner = T(kSqrt2OverPi) * (x + T(kGeluKappa) * x2 * x);
  T t = math::tanh(inner);
  T left = T(0.5) * x, right = T(1) + t;
  T dleft = T(0.5) * right;
  T dright = left * (T(1) - t * t) * T(kSqrt2OverPi) *
             (T(1) + T(3) * T(kGeluKappa) * x2);
  return g * (dleft + dright);
}

} // namespace ampc::num

#endif
