//===- Half.h - IEEE binary16 and bfloat16 -----------------------*- C++ -*-===//
//
// Storage types and correctly rounded conversions (round to nearest even,
// subnormals kept, overflow to +-inf) shared by the generated CPU code, the
// runtime and the reference interpreter. binary16 uses the compiler's
// _Float16 (GCC >= 12 on x86-64), whose conversions are IEEE-correct.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_HALF_H
#define AMPC_RUNTIME_NUMERICS_HALF_H

#include <bit>
#include <cmath>
#include <cstdint>

namespace ampc::num {

using half = _Float16;

// bfloat16: the top 16 bits of an IEEE float.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(fromFloat(f)) {}
  operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

  // Float -> bf16 bits, round to nearest even; NaN stays NaN.
  static uint16_t fromFloat(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      return uint16_t((u >> 16) | 0x40); // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  }
};

// Double -> binary16 with a single rounding.
inline half roundToHalf(double x) { return static_cast<half>(x); }

// Double -> float with a single rounding.
inline float roundToFloat(double x) { return static_cast<float>(x); }

// Double -> bfloat16 with a single rounding: round to float with
// round-to-odd first (sticky bit kept), so the second rounding is exact.
inline bf16 roundToBF16(double x) {
  float f = static_cast<float>(x);
  if (std::isfinite(f) && double(f) != x) {
    // Truncate toward zero, then force the last bit to 1 (round to odd).
    if (std::fabs(double(f)) > std::fabs(x))
      f = std::nextafter(f, 0.0f);
    f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
  }
  bf16 b;
  b.bits = bf16::fromFloat(f);
  return b;
}

} // namespace ampc::num

#endif
