//===- CpuRowMathTest.cpp - The eight-lane row max and sums ---------------===//
#include "runtime/cpu/RowMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ampc::cpu::detail {
namespace {

// The lanes are the definition: lane l sums elements l, l + 8, ...; then
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
float laneSum(const std::vector<float> &x) {
  float s[8] = {};
  for (size_t j = 0; j < x.size(); ++j)
    s[j % 8] += x[j];
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

TEST(CpuRowMath, SumsInTheDocumentedLanes) {
  // Sums of 2^24, 1 and -3, whose rounding depends on the order, at
  // lengths that leave every tail.
  for (size_t n : {0, 1, 7, 8, 9, 19, 64, 67}) {
    std::vector<float> x(n);
    for (size_t j = 0; j < n; ++j)
      x[j] = j % 3 == 0 ? 16777216.0f : (j % 3 == 1 ? 1.0f : -3.0f);
    EXPECT_EQ(rowSum(x.data(), int64_t(n)), laneSum(x)) << n;
    std::vector<float> y(n, 0.5f);
    float dot = rowDot(x.data(), y.data(), int64_t(n));
    for (float &v : x)
      v *= 0.5f;
    EXPECT_EQ(dot, laneSum(x)) << n;
  }
  std::vector<float> a = {16777216.0f, 1, 1, 1, 1, 1, 1, 1};
  // 2^24 + 1 (l0 + l4) rounds to 2^24, the other six ones survive; in order
  // every +1 is lost: 16777216.
  EXPECT_EQ(rowSum(a.data(), 8), 16777222.0f);
}

TEST(CpuRowMath, MaxSkipsNaNAndIsMinusInfWhenEmpty) {
  std::vector<float> x = {NAN, -3.0f, 2.5f, NAN, -INFINITY, 1.0f, 0, 2.0f, NAN, 2.25f};
  EXPECT_EQ(rowMax(x.data(), int64_t(x.size())), 2.5f);
  EXPECT_EQ(rowMax(x.data(), 0), -INFINITY);
  std::vector<float> nan(11, NAN);
  EXPECT_EQ(rowMax(nan.data(), 11), -INFINITY);
  std::vector<float> tail(13, -1.0f);
  tail[12] = 4.0f;
  EXPECT_EQ(rowMax(tail.data(), 13), 4.0f);
}

} // namespace
} // namespace ampc::cpu::detail
