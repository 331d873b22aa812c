//===- Tanh.h - A float tanh the host compiler can vectorize ----*- C++ -*-===//
//
// glibc's tanhf is a call per element (through expm1f): it dominated the
// CPU step of the GPT example (23% of it, in gelu's forward and backward),
// and a call in a loop stops the loop from being vectorized. This tanh is
// straight-line arithmetic with selects, so `-O2 -fno-trapping-math
// -fvect-cost-model=cheap` (ampc's host flags) vectorizes the loops that
// call it; it is also the more accurate of the two:
// test/unit/numerics/TanhTest.cpp sweeps every 7th float in [-12, 12] against
// the FP64 tanh: at most 1.44 ulp and 99.7% correctly rounded, where glibc's
// tanhf reaches 2.17 ulp on the same sweep. The device keeps CUDA's tanhf.
//
//   |x| < 0.5493 (tanh < 1/2): x + x^3 Q(x^2), Q fitted to (tanh x - x)/x^3
//                              with relative weights (error 3e-11 in FP64);
//   otherwise:                 1 - 2 / (exp(2|x|) + 1), |x| clamped to 9.1
//                              where tanh is 1 in float, with Cephes' expf.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_TANH_H
#define AMPC_RUNTIME_NUMERICS_TANH_H

#include "runtime/numerics/Exp.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ampc::num {

// e^x for x in [0, 18.2] (no overflow or denormal handling needed there):
// Cephes' expf, x = n ln2 + r with ln2 split in two, a degree-6 polynomial
// in r, and 2^n built in the exponent bits.
inline float expSmallNonNegative(float x) {
  float fx = x * 1.44269504088896341f + 0.5f;
  // A NaN converted to int is undefined (Clang's UBSan reports it): convert
  // 0 instead; y below is NaN from x all the same.
  fx = fx == fx ? fx : 0.0f;
  int32_t n = int32_t(fx); // x >= 0: truncation is floor
  float fn = float(n);
  float y = detail::expReduced(x, fn);
  int32_t bits = (n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

inline float tanhFloat(float x) {
  float a = std::fabs(x);
  a = a > 9.1f ? 9.1f : a; // NaN stays NaN: the comparison is false
  float large = 1.0f - 2.0f / (expSmallNonNegative(2.0f * a) + 1.0f);
  float a2 = a * a;
  float q = 0.0023981872615013635f;
  q = q * a2 + -0.008415891836178378f;
  q = q * a2 + 0.021783409750061416f;
  q = q * a2 + -0.05395972953245579f;
  q = q * a2 + 0.13333294160958625f;
  q = q * a2 + -0.33333332730493453f;
  float small = a + a * a2 * q;
  // An exact blend, not a ?: select, which GCC turns back into a branch
  // (no vectorization) when it targets SSE4.1 or AVX: both terms are finite,
  // and one of the two products is exactly zero.
  float useSmall = float(a < 0.5493f);
  return std::copysign(small * useSmall + large * (1.0f - useSmall), x);
}

} // namespace ampc::num

#endif // AMPC_RUNTIME_NUMERICS_TANH_H
