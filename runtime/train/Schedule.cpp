//===- Schedule.cpp - Learning-rate schedules ----------------------------===//
#include "runtime/train/Schedule.h"

#include <algorithm>
#include <cmath>

namespace ampc::rt {

float learningRate(const LrSchedule &s, int64_t step) {
  double base = s.baseLr;
  if (step < s.warmupSteps)
    return float(base * double(step + 1) / double(s.warmupSteps));
  if (s.kind == LrSchedule::Constant)
    return s.baseLr;
  double span = double(std::max<int64_t>(1, s.totalSteps - s.warmupSteps));
  double p = std::min(1.0, double(step - s.warmupSteps) / span);
  double lo = s.minLr;
  return float(lo + (base - lo) * 0.5 * (1.0 + std::cos(M_PI * p)));
}

} // namespace ampc::rt
