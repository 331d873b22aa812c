//===- Report.h - Metrics file, progress line, summary -----------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_REPORT_H
#define AMPC_RUNTIME_TRAIN_REPORT_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace ampc::rt {

// One logged step: a line of the metrics file.
struct StepRecord {
  int64_t step = 0;  // 1-based iteration just finished
  double epoch = 0;  // epochs of data consumed, fractional
  float loss = 0, lossScale = 0, gradNorm = 0, clipCoef = 1, lr = 0;
  int32_t skipped = 0;
  // When skipped: "overflow" (a loss scaler is on: inf/NaN in the scaled
  // gradients, the scale backs off) or "nonfinite" (no loss scaler: the
  // gradients were inf/NaN; PyTorch would apply the step).
  std::string skipReason;
  // The step that stopped the run (num::finishStep): "scale_floor" or
  // "max_consecutive_skips"; empty otherwise.
  std::string halted;
  int64_t skippedTotal = 0;
  double stepTimeMs = 0;     // mean over the steps since the last record
  double samplesPerSec = 0;  // over the same steps
  double tokensPerSec = 0;   // 0 when there are no token inputs
};

// `{"step":..,"loss":..,...}` (no newline). Non-finite numbers become null.
std::string metricsJson(const StepRecord &r);

// The human-readable progress text of a step.
std::string progressText(const StepRecord &r, int64_t totalSteps);

// Appends lines to the metrics file (truncated unless |append|) and prints
// progress: \r-updated on a terminal, plain lines otherwise.
class Reporter {
public:
  Reporter(const std::string &metricsPath, bool append);
  ~Reporter();
  void log(const StepRecord &r, int64_t totalSteps);
  void writeJson(const std::string &line); // another metrics line
  void endProgress(); // finishes a \r line before other output

private:
  std::FILE *metrics_ = nullptr;
  std::string path_;
  bool tty_ = false, openLine_ = false;
};

} // namespace ampc::rt

#endif
