//===- Exp.h - A float exp the host compiler can vectorize ------*- C++ -*-===//
//
// glibc's expf is a call per element: in the GPT example's softmax and
// cross-entropy rows it was 6% of the CPU step and kept those loops scalar.
// This exp is straight-line arithmetic (no calls, no branches), so loops
// that call it vectorize under ampc's host flags, as Tanh.h's tanh does.
// Accuracy (test/unit/numerics/ExpTest.cpp, every 61st float of the whole
// finite range against the FP64 exp): at most 1 ulp from the exact value
// and correctly rounded for over 99% of arguments. glibc's expf is correctly
// rounded nearly everywhere, so results move by at most one ulp. The device
// keeps CUDA's expf; the FP64 reference interpreter is unaffected.
//
//   x = n ln2 + r, n = round(x log2 e), |r| <= ln2/2, ln2 in two parts
//   (Cephes: the first has 9 bits, so n * part1 is exact); e^r by Cephes'
//   degree-6 polynomial; 2^n as two exponent-bit factors so that n from
//   -150 to 129 covers subnormal results and overflow to +inf in one rounding
//   of y * 2^a * 2^b (the first product is exact). x below -104 gives +0
//   (e^-104 < 2^-150, half the smallest subnormal), NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_EXP_H
#define AMPC_RUNTIME_NUMERICS_EXP_H

#include <cstdint>
#include <cstring>

namespace ampc::num {

namespace detail {
// e^(x - fn ln2) for |x - fn ln2| <= ln2/2, fn a whole number: Cephes'
// expf core (shared with Tanh.h), ln2 in two parts so that fn times the
// first is exact, then the degree-6 polynomial.
inline float expReduced(float x, float fn) {
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r;
  return y + 1.0f;
}
} // namespace detail

inline float expFloat(float x) {
  // Clamped with comparisons, which are false for NaN: NaN stays NaN.
  float c = x < -104.0f ? -104.0f : x;
  c = c > 89.0f ? 89.0f : c;
  // Round to nearest by the 1.5 * 2^23 shifter (|c| log2 e < 2^22).
  const float shifter = 12582912.0f;
  float fn = (c * 1.44269504088896341f + shifter) - shifter;
  // A NaN converted to int is undefined (Clang's UBSan reports it): convert
  // 0 instead; y below is NaN from c all the same.
  int32_t n = int32_t(fn == fn ? fn : 0.0f);
  float y = detail::expReduced(c, fn);
  // 2^n = 2^a 2^b, a = n >> 1 (floor), b = n - a: both in [-75, 65].
  int32_t a = n >> 1, b = n - a;
  int32_t abits = (a + 127) << 23, bbits = (b + 127) << 23;
  float sa, sb;
  std::memcpy(&sa, &abits, sizeof sa);
  std::memcpy(&sb, &bbits, sizeof sb);
  float e = y * sa * sb;
  // An exact blend, not a ?: select (GCC may make that a branch, see
  // Tanh.h): e is finite or +inf only when x > 89, where keep is 1.
  float keep = float(!(x < -104.0f));
  return e * keep;
}

} // namespace ampc::num

#endif // AMPC_RUNTIME_NUMERICS_EXP_H
