//===- HalfBlocks.cpp - binary16 <-> float over arrays --------------------===//
#include "runtime/cpu/HalfBlocks.h"

#include <algorithm>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ampc::cpu {

using num::half;

void halfToFloat(const half *p, float *dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(p + i))));
#endif
  for (; i < n; ++i)
    dst[i] = float(p[i]);
}

void floatToHalf(const float *src, half *p, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                     _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i)
    p[i] = static_cast<half>(src[i]);
}

void roundThroughHalf(float *x, int64_t n) {
  half h[256];
  for (int64_t i = 0; i < n; i += 256) {
    int64_t m = std::min<int64_t>(256, n - i);
    floatToHalf(x + i, h, m);
    halfToFloat(h, x + i, m);
  }
}

} // namespace ampc::cpu
