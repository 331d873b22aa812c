//===- HalfTest.cpp - binary16 / bfloat16 rounding, bit for bit ------------===//
#include "runtime/numerics/Half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

using namespace ampc::num;

namespace {

uint16_t halfBits(double x) { return std::bit_cast<uint16_t>(roundToHalf(x)); }
uint16_t bfBits(double x) { return roundToBF16(x).bits; }
uint16_t bfBitsF(float x) { return bf16(x).bits; }

TEST(Half, LargestFiniteStays) {
  EXPECT_EQ(halfBits(65504.0), 0x7bff);
  EXPECT_EQ(double(roundToHalf(65504.0)), 65504.0);
  // Just below the halfway point to 2^16 still rounds to 65504.
  EXPECT_EQ(halfBits(65519.99), 0x7bff);
}

TEST(Half, OverflowRoundsToInf) {
  EXPECT_EQ(halfBits(65520.0), 0x7c00);
  EXPECT_EQ(halfBits(-65520.0), 0xfc00);
  EXPECT_EQ(halfBits(1e10), 0x7c00);
  EXPECT_TRUE(std::isinf(double(roundToHalf(70000.0))));
}

TEST(Half, Subnormals) {
  EXPECT_EQ(halfBits(std::ldexp(1.0, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(double(roundToHalf(std::ldexp(1.0, -24))), std::ldexp(1.0, -24));
  EXPECT_EQ(halfBits(1023 * std::ldexp(1.0, -24)), 0x03ff); // largest one
  EXPECT_EQ(halfBits(std::ldexp(1.0, -14)), 0x0400);        // smallest normal
  // 2^-25 is halfway between 0 and 2^-24: ties to the even 0.
  EXPECT_EQ(halfBits(std::ldexp(1.0, -25)), 0x0000);
  // Above halfway rounds up to the smallest subnormal.
  EXPECT_EQ(halfBits(1.5 * std::ldexp(1.0, -25)), 0x0001);
  EXPECT_EQ(halfBits(std::ldexp(1.0, -26)), 0x0000);
  EXPECT_EQ(halfBits(-std::ldexp(1.0, -26)), 0x8000); // signed zero
  // 3 * 2^-25 is halfway between subnormals 1 and 2: ties to even 2.
  EXPECT_EQ(halfBits(3 * std::ldexp(1.0, -25)), 0x0002);
}

TEST(Half, HalfwayCasesRoundToEven) {
  // Above 2048 the spacing is 2.
  EXPECT_EQ(double(roundToHalf(2049.0)), 2048.0);
  EXPECT_EQ(halfBits(2049.0), 0x6800);
  EXPECT_EQ(double(roundToHalf(2051.0)), 2052.0);
  EXPECT_EQ(halfBits(2051.0), 0x6802);
  EXPECT_EQ(halfBits(2050.0), 0x6801);
  // Around 1 the spacing is 2^-10.
  EXPECT_EQ(halfBits(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  EXPECT_EQ(halfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
}

TEST(Half, DoubleIsRoundedOnce) {
  // Via float this would round twice: 1 + 2^-11 (a tie) and then down to 1.
  EXPECT_EQ(halfBits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
            0x3c01);
  EXPECT_EQ(halfBits(1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40)),
            0x3c00);
}

TEST(Half, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan(double(roundToHalf(std::nan("")))));
}

TEST(BF16, FromFloatRoundsToNearestEven) {
  EXPECT_EQ(bfBitsF(1.0f), 0x3f80);
  EXPECT_EQ(bfBitsF(-2.0f), 0xc000);
  // Spacing near 1 is 2^-7; 1 + 2^-8 is a tie -> even 1.0.
  EXPECT_EQ(bfBitsF(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3 * 2^-8 ties between 0x3f81 and 0x3f82 -> even 0x3f82.
  EXPECT_EQ(bfBitsF(1.0f + 3 * 0x1p-8f), 0x3f82);
  // Just above the tie rounds up.
  EXPECT_EQ(bfBitsF(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(float(bf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
}

TEST(BF16, OverflowAndNaN) {
  EXPECT_EQ(bfBitsF(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bfBitsF(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(bfBitsF(std::numeric_limits<float>::infinity()), 0x7f80);
  // A signalling NaN must stay a NaN (not become inf), quietened.
  float snan = std::bit_cast<float>(0x7f800001u);
  EXPECT_EQ(bfBitsF(snan), 0x7fc0);
  EXPECT_TRUE(std::isnan(float(bf16(std::nanf("")))));
}

TEST(BF16, DoubleIsRoundedOnce) {
  // float(x) would be the tie 1 + 2^-8, which then rounds to even 1.0.
  double x = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(bfBits(x), 0x3f81);
  EXPECT_EQ(bfBits(-x), 0xbf81);
  // float(y) rounds up to the tie; y itself is below it.
  double y = 1.0 + std::ldexp(1.0, -8) - std::ldexp(1.0, -40);
  EXPECT_EQ(bfBits(y), 0x3f80);
  // Exact ties still round to even.
  EXPECT_EQ(bfBits(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(bfBits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);
  EXPECT_EQ(bfBits(1.0), 0x3f80);
}

TEST(BF16, DoubleRangeEdges) {
  // Halfway between the largest bf16 and 2^128: ties to even -> inf.
  double tie = std::ldexp(1.0 - std::ldexp(1.0, -9), 128);
  EXPECT_EQ(bfBits(tie), 0x7f80);
  EXPECT_EQ(bfBits(tie * (1.0 - std::ldexp(1.0, -30))), 0x7f7f);
  EXPECT_EQ(bfBits(1e300), 0x7f80);
  // Smallest bf16 subnormal is 2^-133; 2^-134 ties to 0; a hair above
  // (below float's precision there) rounds up.
  EXPECT_EQ(bfBits(std::ldexp(1.0, -133)), 0x0001);
  EXPECT_EQ(bfBits(std::ldexp(1.0, -134)), 0x0000);
  EXPECT_EQ(bfBits(std::ldexp(1.0, -134) + std::ldexp(1.0, -160)), 0x0001);
  EXPECT_EQ(bfBits(1e-50), 0x0000);
  EXPECT_EQ(bfBits(-1e-50), 0x8000);
  EXPECT_TRUE(std::isnan(float(roundToBF16(std::nan("")))));
}

TEST(Float, RoundToFloat) {
  EXPECT_EQ(roundToFloat(1.0 + std::ldexp(1.0, -24)), 1.0f); // tie -> even
  EXPECT_EQ(roundToFloat(1.0 + 3 * std::ldexp(1.0, -24)), 1.0f + 0x1p-22f);
  EXPECT_TRUE(std::isinf(roundToFloat(1e39)));
}

} // namespace
