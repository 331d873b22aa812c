//===- ScalerTest.cpp - The loss-scale state machine, exact trajectories -===//
#include "runtime/Model.h"
#include "runtime/numerics/Scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace ampc::num;

namespace {

struct State {
  float scale;
  int32_t growthTracker = 0, hysteresisLeft = 1;
  int64_t skippedSteps = 0;
};

// Runs |steps| ('.' clean, 'x' overflow) and returns the scale after each.
std::vector<float> run(State &s, const std::string &steps,
                       const LossScaleParams &p) {
  std::vector<float> out;
  for (char c : steps) {
    updateScaler(s, c == 'x', p);
    out.push_back(s.scale);
  }
  return out;
}

TEST(Scaler, PyTorchDefaultsBackoffAndGrowth) {
  LossScaleParams p; // 2.0, 0.5, 2000
  State s{65536.0f};
  auto traj = run(s, "x", p);
  EXPECT_EQ(traj, std::vector<float>{32768.0f});
  EXPECT_EQ(s.growthTracker, 0);
  for (int i = 0; i < 1999; ++i)
    updateScaler(s, false, p);
  EXPECT_EQ(s.scale, 32768.0f);
  EXPECT_EQ(s.growthTracker, 1999);
  updateScaler(s, false, p);
  EXPECT_EQ(s.scale, 65536.0f);
  EXPECT_EQ(s.growthTracker, 0);
  EXPECT_EQ(s.skippedSteps, 1);
}

TEST(Scaler, ExactTrajectoryWithSmallInterval) {
  LossScaleParams p;
  p.growthInterval = 3;
  State s{8.0f};
  // An overflow resets the tracker: growth needs 3 clean steps in a row.
  auto traj = run(s, "...x..x...", p);
  EXPECT_EQ(traj, (std::vector<float>{8, 8, 16, 8, 8, 8, 4, 4, 4, 8}));
  EXPECT_EQ(s.skippedSteps, 2);
  EXPECT_EQ(s.growthTracker, 0);
}

TEST(Scaler, GrowthToInfinityKeepsScaleAndResetsTracker) {
  LossScaleParams p;
  p.growthInterval = 2;
  State s{0x1p127f};
  run(s, "..", p);
  EXPECT_EQ(s.scale, 0x1p127f); // 2^128 is not finite
  EXPECT_EQ(s.growthTracker, 0);
}

TEST(Scaler, MegatronHysteresis) {
  LossScaleParams p;
  p.growthInterval = 4;
  p.hysteresis = 2;
  State s{1024.0f, 0, 2};
  // First overflow only spends hysteresis; the second backs off even with a
  // clean step in between (refilled only at growth); a third backs off again.
  auto traj = run(s, "x.xx", p);
  EXPECT_EQ(traj, (std::vector<float>{1024, 1024, 512, 256}));
  EXPECT_EQ(s.hysteresisLeft, 0);
  EXPECT_EQ(s.skippedSteps, 3);
  // Growth refills the counter: the next overflow is absorbed again.
  traj = run(s, "....x", p);
  EXPECT_EQ(traj, (std::vector<float>{256, 256, 256, 512, 512}));
  EXPECT_EQ(s.hysteresisLeft, 1);
}

TEST(Scaler, HysteresisOneIsPyTorch) {
  LossScaleParams p;
  p.growthInterval = 2;
  State a{64.0f, 0, 1};
  EXPECT_EQ(run(a, "xx..x", p), (std::vector<float>{32, 16, 16, 32, 16}));
}

TEST(Scaler, MinAndMaxClamps) {
  LossScaleParams p;
  p.growthInterval = 1;
  p.minScale = 0.75f;
  p.maxScale = 10.0f;
  State s{1.0f};
  EXPECT_EQ(run(s, "xx", p), (std::vector<float>{0.75f, 0.75f}));
  State t{6.0f};
  EXPECT_EQ(run(t, "..", p), (std::vector<float>{10.0f, 10.0f}));
}

TEST(Scaler, InvScaleIsDoubleReciprocalRounded) {
  EXPECT_EQ(invScale(65536.0f), 0x1p-16f);
  EXPECT_EQ(invScale(3.0f), float(1.0 / 3.0));
  EXPECT_EQ(invScale(0.0f), std::numeric_limits<float>::infinity());
}

TEST(Scaler, ClipCoefIsReciprocalTimesMaxNorm) {
  EXPECT_EQ(clipCoef(1.0f, 0.5f), 1.0f); // clamped
  EXPECT_EQ(clipCoef(1.0f, 0.0f), 1.0f);
  float norm = 3.0f, maxNorm = 1.0f;
  float r = 1.0f / (norm + 1e-6f);
  EXPECT_EQ(clipCoef(maxNorm, norm), r * maxNorm);
  EXPECT_EQ(clipCoef(1.0f, std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(clipCoef(1.0f, NAN)));
  // The reciprocal form differs from a plain division somewhere; make sure
  // we compute the reciprocal form (torch: max_norm / t == t.reciprocal() *
  // max_norm).
  int differ = 0;
  for (int i = 1; i < 2000; ++i) {
    float n = 1.0f + float(i) * 0.37f, m = 1.3f;
    float expect = (1.0f / (n + 1e-6f)) * m;
    EXPECT_EQ(clipCoef(m, n), expect > 1.0f ? 1.0f : expect);
    differ += expect != m / (n + 1e-6f);
  }
  EXPECT_GT(differ, 0);
}

// finishStep on rt::ScalerState: '.' clean, 'x' overflow; the scale after
// each step, until it halts.
std::vector<float> finish(ampc::rt::ScalerState &s, const std::string &steps,
                          bool dynamic, const LossScaleParams &p) {
  std::vector<float> out;
  for (char c : steps) {
    if (s.halted)
      break;
    finishStep(s, c == 'x', dynamic, p);
    out.push_back(s.scale);
  }
  return out;
}

// Backoff to the floor is allowed; the backoff below it halts, on the
// skipped step, with the scale kept at its last usable value.
TEST(Scaler, FloorHaltsTheBackoffBelowIt) {
  LossScaleParams p;
  p.scaleFloor = 0.125f;
  ampc::rt::ScalerState s;
  s.scale = 1.0f;
  auto traj = finish(s, ".xxxxx", true, p);
  EXPECT_EQ(traj, (std::vector<float>{1, 0.5f, 0.25f, 0.125f, 0.125f}));
  EXPECT_EQ(s.halted, kHaltScaleFloor);
  EXPECT_EQ(s.haltScale, 0.0625f);
  EXPECT_EQ(s.consecutiveSkips, 4);
  EXPECT_EQ(s.skippedSteps, 4);
  EXPECT_EQ(s.refusedSteps, 0);
  refuseStep(s);
  EXPECT_EQ(s.refusedSteps, 1);
  EXPECT_EQ(s.scale, 0.125f);
}

// The default floor 2^-24 from PyTorch's default 65536: 40 backoffs reach
// it, the 41st overflow in a row halts. Without a floor (0) the scale
// underflows through the subnormals to 0, which halts too: a step with
// inv_scale = inf is never taken.
TEST(Scaler, DefaultFloorAndZero) {
  LossScaleParams p;
  p.scaleFloor = 0x1p-24f;
  ampc::rt::ScalerState s;
  s.scale = 65536.0f;
  auto traj = finish(s, std::string(100, 'x'), true, p);
  ASSERT_EQ(traj.size(), 41u);
  EXPECT_EQ(traj[39], 0x1p-24f);
  EXPECT_EQ(s.scale, 0x1p-24f);
  EXPECT_EQ(s.haltScale, 0x1p-25f);
  EXPECT_EQ(s.consecutiveSkips, 41);
  EXPECT_EQ(s.halted, kHaltScaleFloor);

  p.scaleFloor = 0.0f;
  ampc::rt::ScalerState z;
  z.scale = 65536.0f;
  traj = finish(z, std::string(300, 'x'), true, p);
  // 2^16 down to the smallest subnormal 2^-149 is 165 backoffs.
  ASSERT_EQ(traj.size(), 166u);
  EXPECT_EQ(z.scale, 0x1p-149f);
  EXPECT_EQ(z.haltScale, 0.0f);
  EXPECT_EQ(z.halted, kHaltScaleFloor);
}

// min_scale is a clamp the run continues at: at or above the floor it
// keeps the run going (only max_consecutive_skips stops it); below the
// floor the clamped scale is still below it and halts.
TEST(Scaler, MinScaleClampVersusFloor) {
  LossScaleParams p;
  p.scaleFloor = 0.125f;
  p.minScale = 0.25f;
  p.maxConsecutiveSkips = 0;
  ampc::rt::ScalerState s;
  s.scale = 1.0f;
  auto traj = finish(s, std::string(50, 'x'), true, p);
  EXPECT_EQ(traj.size(), 50u);
  EXPECT_EQ(s.scale, 0.25f);
  EXPECT_EQ(s.halted, kNotHalted);
  EXPECT_EQ(s.consecutiveSkips, 50);

  p.minScale = 0.0625f;
  ampc::rt::ScalerState t;
  t.scale = 0.25f;
  traj = finish(t, "xxx", true, p);
  EXPECT_EQ(traj, (std::vector<float>{0.125f, 0.125f}));
  EXPECT_EQ(t.haltScale, 0.0625f);
  EXPECT_EQ(t.halted, kHaltScaleFloor);
}

// Hysteresis: overflows that keep the scale do not halt; the floor is
// checked when a backoff would actually change it.
TEST(Scaler, FloorWithHysteresis) {
  LossScaleParams p;
  p.scaleFloor = 0.5f;
  p.hysteresis = 3;
  ampc::rt::ScalerState s;
  s.scale = 1.0f;
  s.hysteresisLeft = 3;
  auto traj = finish(s, "xxxxx", true, p);
  EXPECT_EQ(traj, (std::vector<float>{1, 1, 0.5f, 0.5f}));
  EXPECT_EQ(s.halted, kHaltScaleFloor);
  EXPECT_EQ(s.consecutiveSkips, 4);
}

// max_consecutive_skips counts skips in a row, with any scaling or none; a
// clean step resets the count (not the total).
TEST(Scaler, MaxConsecutiveSkips) {
  for (bool dynamic : {true, false}) {
    LossScaleParams p;
    p.maxConsecutiveSkips = 3;
    ampc::rt::ScalerState s;
    s.scale = 8.0f;
    auto traj = finish(s, "xx.xx.xxx.", dynamic, p);
    EXPECT_EQ(traj.size(), 9u);
    EXPECT_EQ(s.halted, kHaltConsecutiveSkips);
    EXPECT_EQ(s.consecutiveSkips, 3);
    EXPECT_EQ(s.skippedSteps, 7);
    // The third skip still backs off (it is above the floor 0).
    EXPECT_EQ(s.scale, dynamic ? 0.0625f : 8.0f);
    EXPECT_EQ(s.haltScale, s.scale);
  }
}

// With both limits off, finishStep is updateScaler (PyTorch) plus counts.
TEST(Scaler, FinishStepMatchesUpdateScalerWhenOff) {
  LossScaleParams p;
  p.growthInterval = 3;
  ampc::rt::ScalerState s;
  s.scale = 8.0f;
  State t{8.0f};
  EXPECT_EQ(finish(s, "...x..x...", true, p), run(t, "...x..x...", p));
  EXPECT_EQ(s.skippedSteps, t.skippedSteps);
  EXPECT_EQ(s.growthTracker, t.growthTracker);
  EXPECT_EQ(s.consecutiveSkips, 0);
}

} // namespace
