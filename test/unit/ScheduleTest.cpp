//===- ScheduleTest.cpp - Learning-rate schedule values ------------------===//
#include "runtime/train/Schedule.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ampc::rt;

TEST(Schedule, ConstantWithWarmup) {
  LrSchedule s{LrSchedule::Constant, 0.1f, 0.0f, 4, 100};
  EXPECT_EQ(learningRate(s, 0), float(0.1f * 1.0 / 4));
  EXPECT_EQ(learningRate(s, 1), float(double(0.1f) * 2 / 4));
  EXPECT_EQ(learningRate(s, 3), 0.1f);
  EXPECT_EQ(learningRate(s, 50), 0.1f);
}

TEST(Schedule, CosineToMinLr) {
  LrSchedule s{LrSchedule::Cosine, 1.0f, 0.1f, 2, 12};
  EXPECT_EQ(learningRate(s, 0), 0.5f);
  EXPECT_EQ(learningRate(s, 1), 1.0f);
  EXPECT_EQ(learningRate(s, 2), 1.0f); // p = 0
  // Halfway through the 10 decay steps: min + (base-min)/2.
  EXPECT_EQ(learningRate(s, 7), float(0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * 0.5))));
  EXPECT_EQ(learningRate(s, 12), 0.1f);
  EXPECT_EQ(learningRate(s, 20), 0.1f); // stays at the floor
}
