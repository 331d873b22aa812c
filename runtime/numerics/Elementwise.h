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
#include "runtime/numerics/Tanh.h"

#include <cmath>

namespace ampc::num {

// libm by scalar type: float calls the f-suffixed C functions (the CUDA
// device functions under nvcc), double the plain ones.
namespace math {
AMPC_HD inline float exp(float x) { return ::expf(x); }
AMPC_HD inline double exp(double x) { return ::exp(x); }
AMPC_HD inline float sqrt(float x) { return ::sqrtf(x); }
AMPC_HD inline double sqrt(double x) { return ::sqrt(x); }
// The host's tanh is runtime/numerics/Tanh.h's (vectorizable, <= 1.44 ulp).
AMPC_HD inline float tanh(float x) {
#ifdef __CUDA_ARCH__
  return ::tanhf(x);
#else
  return tanhFloat(x);
#endif
}
AMPC_HD inline double tanh(double x) { return ::tanh(x); }
AMPC_HD inline float erf(float x) { return ::erff(x); }
AMPC_HD inline double erf(double x) { return ::erf(x); }
AMPC_HD inline float pow(float x, float e) { return ::powf(x, e); }
AMPC_HD inline double pow(double x, double e) { return ::pow(x, e); }
AMPC_HD inline float log1p(float x) { return ::log1pf(x); }
AMPC_HD inline double log1p(double x) { return ::log1p(x); }
AMPC_HD inline float fabs(float x) { return ::fabsf(x); }
AMPC_HD inline double fabs(double x) { return ::fabs(x); }
AMPC_HD inline float sin(float x) { return ::sinf(x); }
AMPC_HD inline double sin(double x) { return ::sin(x); }
AMPC_HD inline float cos(float x) { return ::cosf(x); }
AMPC_HD inline double cos(double x) { return ::cos(x); }
AMPC_HD inline float expm1(float x) { return ::expm1f(x); }
AMPC_HD inline double expm1(double x) { return ::expm1(x); }
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

// silu(x) = x * sigmoid(x), computed as x / (1 + exp(-x)) (PyTorch's
// silu_kernel).
template <class T> AMPC_HD inline T silu(T x) {
  return x / (T(1) + math::exp(-x));
}

// g * silu'(x) (PyTorch's silu_backward_kernel).
template <class T> AMPC_HD inline T siluGrad(T x, T g) {
  T s = T(1) / (T(1) + math::exp(-x));
  return g * s * (T(1) + x * (T(1) - s));
}

// leaky_relu: x where x > 0, else x * slope (NaN stays NaN).
template <class T> AMPC_HD inline T leakyRelu(T x, T slope) {
  return x > T(0) ? x : x * slope;
}

// g where x > 0, else g * slope (PyTorch's leaky_relu_backward).
template <class T> AMPC_HD inline T leakyReluGrad(T x, T g, T slope) {
  return x > T(0) ? g : g * slope;
}

// elu with PyTorch's coefficients: negcoef = alpha * scale, poscoef =
// scale, negiptcoef = input_scale (elu_kernel: x <= 0 is the negative side).
template <class T>
AMPC_HD inline T elu(T x, T negcoef, T poscoef, T negiptcoef) {
  return x <= T(0) ? math::expm1(x * negiptcoef) * negcoef : x * poscoef;
}

// g * elu'(x) (PyTorch's elu_backward with is_result false).
template <class T>
AMPC_HD inline T eluGrad(T x, T g, T negcoef, T poscoef, T negiptcoef) {
  return x <= T(0) ? g * negiptcoef * negcoef * math::exp(x * negiptcoef)
                   : g * poscoef;
}

// softplus(x) = log1p(exp(beta x)) / beta, and x itself where beta x >
// threshold (PyTorch's softplus_kernel).
template <class T> AMPC_HD inline T softplus(T x, T beta, T threshold) {
  return x * beta > threshold ? x : math::log1p(math::exp(x * beta)) / beta;
}

// g * softplus'(x) (PyTorch's softplus_backward_kernel).
template <class T>
AMPC_HD inline T softplusGrad(T x, T g, T beta, T threshold) {
  T z = math::exp(x * beta);
  return x * beta > threshold ? g : g * z / (z + T(1));
}

// clamp(x, lo, hi) = min(max(x, lo), hi); NaN stays NaN. An absent bound is
// -inf or +inf; lo > hi gives hi everywhere, as torch.clamp.
template <class T> AMPC_HD inline T clamp(T x, T lo, T hi) {
  if (x != x)
    return x;
  T y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

// g where lo <= x <= hi, else 0 (PyTorch's clamp_backward).
template <class T> AMPC_HD inline T clampGrad(T x, T g, T lo, T hi) {
  return x >= lo && x <= hi ? g : T(0);
}

// torch.maximum / torch.minimum: a NaN operand gives NaN.
template <class T> AMPC_HD inline T maximum(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  return a > b ? a : b;
}
template <class T> AMPC_HD inline T minimum(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  return a < b ? a : b;
}

// Cotangent of maximum(a, b) with respect to a: g where a > b, g / 2 where
// a == b (ties share it), 0 where a < b (PyTorch's max/min backward, which
// gives g where a comparison with NaN is false). minimum's VJP calls it with
// the operands swapped.
template <class T> AMPC_HD inline T maximumGrad(T a, T b, T g) {
  return a < b ? T(0) : (a == b ? g / T(2) : g);
}

// Per-element regression losses of d = input - target, as PyTorch's
// l1_loss, smooth_l1_loss (p = beta; beta == 0 is l1) and huber_loss
// (p = delta).
enum class RegressionLoss : int { L1 = 0, SmoothL1 = 1, Huber = 2 };
template <class T>
AMPC_HD inline T regressionLoss(RegressionLoss kind, T d, T p) {
  T a = math::fabs(d);
  if (kind == RegressionLoss::SmoothL1 && p != T(0))
    return a < p ? T(0.5) * a * a / p : a - T(0.5) * p;
  if (kind == RegressionLoss::Huber)
    return a < p ? T(0.5) * a * a : p * (a - T(0.5) * p);
  return a;
}

} // namespace ampc::num

#endif
