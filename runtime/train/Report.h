//===- Report.h - Metrics file, progress line, summary -----------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_REPORT_H
#define AMPC_RUNTIME_TRAIN_REPORT_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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
  // Overflow attribution of a skipped step: the parameters whose gradients
  // held inf or NaN (the first kMaxNonFiniteNames, in parameter order) and
  // how many there were; empty and 0 when unknown or not skipped.
  std::vector<std::string> nonFiniteParams;
  int64_t nonFiniteTotal = 0;
  // The run's clip-by-norm threshold (metrics "clip_norm"); 0: no clipping.
  float clipNorm = 0;
  int64_t skippedTotal = 0;
  double stepTimeMs = 0;     // mean over the steps since the last record
  double samplesPerSec = 0;  // over the same steps
  double tokensPerSec = 0;   // 0 when there are no token inputs
};

inline constexpr size_t kMaxNonFiniteNames = 4;

// Fills |r|'s attribution from per-parameter non-finite flags.
void attributeNonFinite(StepRecord &r, const std::vector<std::string> &params,
                        const std::vector<uint8_t> &flags);

// The end-of-run summary of repeated skips: "skipped 12 steps; fc2.weight
// non-finite in 12, fc1.bias in 3" (most often first, at most 6 named).
// Empty when |skipped| is 0.
std::string skipSummary(int64_t skipped, const std::vector<std::string> &params,
                        const std::vector<int64_t> &counts);

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
  // Keeps every metrics line from now on (lines()), for --plot.
  void keepLines() { keep_ = true; }
  const std::vector<std::string> &lines() const { return lines_; }
  void endProgress(); // finishes a \r line before other output

private:
  std::FILE *metrics_ = nullptr;
  std::string path_;
  bool writeFailed_ = false; // said once; training goes on
  void warnWriteFailed(int err);
  bool tty_ = false, openLine_ = false, keep_ = false;
  std::vector<std::string> lines_;
};

} // namespace ampc::rt

#endif
