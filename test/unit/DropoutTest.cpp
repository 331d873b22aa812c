//===- DropoutTest.cpp - The shared dropout mask ---------------------------===//
#include "runtime/numerics/Dropout.h"

#include <gtest/gtest.h>

using namespace ampc::num;

namespace {

int kept(uint64_t seed, uint64_t step, uint64_t key, double p, int n) {
  int count = 0;
  for (int i = 0; i < n; ++i)
    count += dropoutKeep(seed, step, key, uint64_t(i), p);
  return count;
}

TEST(Dropout, KeepRateIsOneMinusP) {
  constexpr int n = 200000;
  // Binomial std at p = 0.3 is ~205; allow 5 sigma.
  EXPECT_NEAR(kept(1, 0, 7, 0.3, n), 0.7 * n, 1025);
  EXPECT_NEAR(kept(2, 5, 9, 0.5, n), 0.5 * n, 1120);
  EXPECT_EQ(kept(1, 0, 7, 0.0, 1000), 1000);
}

TEST(Dropout, MaskDependsOnSeedStepKeyOnly) {
  auto mask = [](uint64_t seed, uint64_t step, uint64_t key) {
    std::vector<bool> m;
    for (uint64_t i = 0; i < 256; ++i)
      m.push_back(dropoutKeep(seed, step, key, i, 0.5));
    return m;
  };
  EXPECT_EQ(mask(3, 4, 5), mask(3, 4, 5));
  EXPECT_NE(mask(3, 4, 5), mask(4, 4, 5));
  EXPECT_NE(mask(3, 4, 5), mask(3, 5, 5));
  EXPECT_NE(mask(3, 4, 5), mask(3, 4, 6));
}

TEST(Dropout, HoistedStreamKeyMatches) {
  uint64_t stream = dropoutStreamKey(11, 12, 13);
  for (uint64_t i = 0; i < 100; ++i)
    EXPECT_EQ(dropoutKeep(stream, i, 0.25), dropoutKeep(11, 12, 13, i, 0.25));
}

} // namespace
