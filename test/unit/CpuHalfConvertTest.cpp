//===- CpuHalfConvertTest.cpp - widen/narrow's F16C blocks, bit for bit ----===//
//
// runtime/cpu/HalfBlocks.cpp converts binary16 8 at a time with F16C where
// the build has it: every binary16 and a set of floats around every
// rounding case against the scalar _Float16 conversions, with lengths that
// leave a partial block.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/HalfBlocks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace ampc::cpu::test {
namespace {

using num::half;

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
uint16_t bitsOf(half h) {
  uint16_t u;
  std::memcpy(&u, &h, sizeof u);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(CpuHalfConvert, EveryHalfWidensAsTheScalarConversion) {
  std::vector<half> in(65536 + 5); // + 5: a partial block at the end
  for (size_t i = 0; i < in.size(); ++i) {
    uint16_t u = uint16_t(i);
    std::memcpy(&in[i], &u, sizeof u);
  }
  std::vector<float> out(in.size());
  halfToFloat(in.data(), out.data(), int64_t(in.size()));
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(bitsOf(out[i]), bitsOf(float(in[i]))) << "half bits " << i;
}

// Every finite binary16 value, the float just below and above it, and the
// midpoints to the next one (ties to even), plus overflow, the subnormal
// range, infinities and NaNs with payloads.
std::vector<float> roundingCases() {
  std::vector<float> in;
  for (uint32_t u = 0; u < 0x7c00; ++u) {
    uint16_t b = uint16_t(u);
    half h, next;
    std::memcpy(&h, &b, sizeof b);
    uint16_t nb = uint16_t(u + 1);
    std::memcpy(&next, &nb, sizeof nb);
    float f = float(h), mid = (f + float(next)) / 2.0f;
    for (float x : {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e9f), mid,
                    std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      in.push_back(x);
      in.push_back(-x);
    }
  }
  for (float x : {65504.0f, 65519.0f, 65520.0f, 1e6f, 1e-10f, 1e-45f,
                  std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(),
                  floatOf(0x7fa00001u), floatOf(0xffc12345u)})
    in.insert(in.end(), {x, -x});
  while (in.size() % 8 != 3) // a partial block at the end
    in.push_back(0.0f);
  return in;
}

TEST(CpuHalfConvert, FloatsRoundAsTheScalarConversion) {
  std::vector<float> in = roundingCases();
  std::vector<half> out(in.size());
  floatToHalf(in.data(), out.data(), int64_t(in.size()));
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(bitsOf(out[i]), bitsOf(static_cast<half>(in[i])))
        << "float bits " << bitsOf(in[i]);
}

// An op's result rounded to binary16 in place, over more than one of its
// 256-float chunks.
TEST(CpuHalfConvert, RoundThroughHalfIsTheScalarRoundTrip) {
  std::vector<float> in = roundingCases(), x = in;
  roundThroughHalf(x.data(), int64_t(x.size()));
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(bitsOf(x[i]), bitsOf(float(static_cast<half>(in[i]))))
        << "float bits " << bitsOf(in[i]);
}

} // namespace
} // namespace ampc::cpu::test
