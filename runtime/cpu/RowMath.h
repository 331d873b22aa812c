//===- RowMath.h - Max and sum of a float row, vectorizable -----*- C++ -*-===//
//
// The softmax and log-sum-exp rows of attention and cross-entropy: a max and
// a sum over a row, written as eight running lanes that the host compiler
// turns into vector operations (a one-accumulator loop must add in order
// and stays scalar, one dependent add per element). The lanes are part of
// the definition, so the result is the same on every host: lane l takes
// elements l, l + 8, ...; the lanes are then combined as
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). Summing in eight lanes
// also bounds the rounding error by about n/8 ulps instead of n.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_ROWMATH_H
#define AMPC_RUNTIME_CPU_ROWMATH_H

#include <cmath>
#include <cstdint>

namespace ampc::cpu::detail {

// max over x[0, n), -inf for n = 0; NaN elements are skipped as fmax skips
// them (a comparison with NaN is false).
inline float rowMax(const float *x, int64_t n) {
  float m[8];
  for (float &v : m)
    v = -INFINITY;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l)
      m[l] = x[j + l] > m[l] ? x[j + l] : m[l];
  for (int l = 0; j + l < n; ++l)
    m[l] = x[j + l] > m[l] ? x[j + l] : m[l];
  for (int l = 0; l < 4; ++l)
    m[l] = m[l + 4] > m[l] ? m[l + 4] : m[l];
  m[0] = m[2] > m[0] ? m[2] : m[0];
  m[1] = m[3] > m[1] ? m[3] : m[1];
  return m[1] > m[0] ? m[1] : m[0];
}

// Sum of x[0, n) in eight lanes (see above); +0 for n = 0.
inline float rowSum(const float *x, int64_t n) {
  float s[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l)
      s[l] += x[j + l];
  for (int l = 0; j + l < n; ++l)
    s[l] += x[j + l];
  for (int l = 0; l < 4; ++l)
    s[l] += s[l + 4];
  s[0] += s[2];
  s[1] += s[3];
  return s[0] + s[1];
}

// Sum of a[j] * b[j] over [0, n), in the lanes of rowSum.
inline float rowDot(const float *a, const float *b, int64_t n) {
  float s[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l)
      s[l] += a[j + l] * b[j + l];
  for (int l = 0; j + l < n; ++l)
    s[l] += a[j + l] * b[j + l];
  for (int l = 0; l < 4; ++l)
    s[l] += s[l + 4];
  s[0] += s[2];
  s[1] += s[3];
  return s[0] + s[1];
}

} // namespace ampc::cpu::detail

#endif
