//===- Schedule.h - Learning-rate schedules ----------------------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_SCHEDULE_H
#define AMPC_RUNTIME_TRAIN_SCHEDULE_H

#include <cstdint>

namespace ampc::rt {

struct LrSchedule {
  enum Kind { Constant, Cosine } kind = Constant;
  float baseLr = 1e-3f;
  float minLr = 0.0f;       // cosine floor
  int64_t warmupSteps = 0;  // linear warmup
  int64_t totalSteps = 1;   // the cosine reaches minLr here
};

// The lr of 0-based iteration |step| (computed in double, rounded once):
//   step < warmup:  base * (step + 1) / warmup
//   constant:       base
//   cosine:         min + (base - min) * (1 + cos(pi * p)) / 2,
//                   p = min(1, (step - warmup) / max(1, total - warmup))
float learningRate(const LrSchedule &s, int64_t step);

} // namespace ampc::rt

#endif
