//===- Options.h - What a training run was asked to do -----------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_OPTIONS_H
#define AMPC_RUNTIME_TRAIN_OPTIONS_H

#include "runtime/Model.h"
#include "runtime/data/Dataset.h"
#include "runtime/train/DataParallel.h"
#include "runtime/train/Schedule.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

struct TrainOptions {
  std::vector<data::DataSpec> data, eval;
  int64_t steps = 0;  // total optimizer iterations (resumed ones included)
  int64_t epochs = 0; // or total epochs; neither: one epoch
  bool dropLast = true; // --drop-last (Train.cpp: why it is the default)
  bool shuffle = true;  // --shuffle: a new sample order each epoch
  LrSchedule::Kind schedule = LrSchedule::Constant;
  float minLr = 0.0f;
  int64_t warmupSteps = 0;
  int64_t decaySteps = 0; // cosine horizon; 0: the total steps
  std::optional<uint64_t> seed; // default 0; a resumed run keeps its seed
  int64_t logEvery = 10;
  std::string metricsPath;
  std::string checkpointDir;
  int64_t checkpointEvery = 0; // 0: only at the end
  std::string resume;
  int64_t context = 0;
  DataParallelOptions dataParallel; // --bucket-mb, --comm-timeout, ...
  std::string dumpStep; // --dump-step FILE (runtime/train/StepDump.h)
  std::string plotPath; // --plot FILE.svg|png: the run drawn at its end
  std::string initWeights; // --init-weights FILE (runtime/train/InitWeights.h)
  // Applies the hyper-parameter flags given on the command line on top of
  // the model's defaults (or a resumed run's values).
  std::function<void(Hyper &)> applyHyperFlags = [](Hyper &) {};
  // One line per hyper-parameter flag given that this binary does not use
  // (SGD's --momentum in an Adam binary...), printed as notes by rank 0.
  std::vector<std::string> unusedFlagNotes;
};

// Parses argv (Abseil flags; see Flags.cpp). Exits for --help.
TrainOptions parseTrainFlags(int argc, char **argv, const Model &model);

// Runs training and evaluation; returns the process exit status. Throws
// InputError for bad input.
int runTraining(Model &model, const TrainOptions &options);

} // namespace ampc::rt

#endif
