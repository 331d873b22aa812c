//===- TanhTest.cpp - The host's float tanh against the FP64 tanh ---------===//
#include "runtime/numerics/Tanh.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using ampc::num::tanhFloat;

// |a - exact| in units of the last place of exact rounded to float.
double ulpError(float a, double exact) {
  float e = std::fabs(float(exact));
  double ulp = double(std::nextafter(e, 2.0f)) - double(e);
  return std::fabs(double(a) - exact) / ulp;
}

// Every 61st float in (-12, 12) down to the smallest normal, both signs:
// 36 million points, every exponent, both pieces and the seam between them.
// (Every 7th, 310 million points, gives the same bounds: 1.44 ulp, 99.7%.)
TEST(Tanh, AtMostOneAndAHalfUlpAndMostlyCorrectlyRounded) {
  const uint32_t lo = std::bit_cast<uint32_t>(std::numeric_limits<float>::min());
  const uint32_t hi = std::bit_cast<uint32_t>(12.0f);
  double worst = 0, worstAt = 0;
  int64_t n = 0, correct = 0;
  for (uint32_t b = lo; b < hi; b += 61)
    for (uint32_t sign : {0u, 0x80000000u}) {
      float x = std::bit_cast<float>(b | sign);
      float y = tanhFloat(x);
      double exact = std::tanh(double(x));
      double e = ulpError(y, exact);
      if (e > worst) {
        worst = e;
        worstAt = x;
      }
      correct += y == float(exact);
      ++n;
    }
  EXPECT_LE(worst, 1.5) << "at x = " << worstAt;
  EXPECT_GE(double(correct) / double(n), 0.995);
}

TEST(Tanh, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(std::bit_cast<uint32_t>(tanhFloat(0.0f)), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(tanhFloat(-0.0f)), 0x80000000u);
  EXPECT_EQ(tanhFloat(inf), 1.0f);
  EXPECT_EQ(tanhFloat(-inf), -1.0f);
  EXPECT_EQ(tanhFloat(1e30f), 1.0f);
  EXPECT_EQ(tanhFloat(-9.5f), -1.0f);
  EXPECT_TRUE(std::isnan(tanhFloat(std::numeric_limits<float>::quiet_NaN())));
  float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(tanhFloat(tiny), tiny);
  EXPECT_EQ(tanhFloat(1e-20f), 1e-20f);
}

} // namespace
