//===- Report.cpp - Metrics file, progress line, summary -----------------===//
#include "runtime/train/Report.h"
#include "runtime/data/DataError.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace ampc::rt {

using json = nlohmann::ordered_json;

static json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string metricsJson(const StepRecord &r) {
  json j = {{"step", r.step},
            {"epoch", num(r.epoch)},
            {"loss", num(r.loss)},
            {"loss_scale", num(r.lossScale)},
            {"grad_norm", num(r.gradNorm)},
            {"clip_coef", num(r.clipCoef)},
            {"skipped", r.skipped}};
  if (r.skipped && !r.skipReason.empty())
    j["skip_reason"] = r.skipReason;
  if (r.skipped && r.nonFiniteTotal > 0) {
    j["nonfinite_params"] = r.nonFiniteParams;
    j["nonfinite_params_total"] = r.nonFiniteTotal;
  }
  j["skipped_total"] = r.skippedTotal;
  if (r.clipNorm > 0)
    j["clip_norm"] = num(r.clipNorm);
  j["lr"] = num(r.lr);
  j["step_time_ms"] = num(r.stepTimeMs);
  j["samples_per_s"] = num(r.samplesPerSec);
  if (r.tokensPerSec > 0)
    j["tokens_per_s"] = num(r.tokensPerSec);
  if (!r.halted.empty())
    j["halted"] = r.halted;
  return j.dump();
}

void attributeNonFinite(StepRecord &r, const std::vector<std::string> &params,
                        const std::vector<uint8_t> &flags) {
  r.nonFiniteParams.clear();
  r.nonFiniteTotal = 0;
  for (size_t k = 0; k < flags.size() && k < params.size(); ++k) {
    if (!flags[k])
      continue;
    if (r.nonFiniteParams.size() < kMaxNonFiniteNames)
      r.nonFiniteParams.push_back(params[k]);
    ++r.nonFiniteTotal;
  }
}

std::string skipSummary(int64_t skipped, const std::vector<std::string> &params,
                        const std::vector<int64_t> &counts) {
  if (skipped <= 0)
    return "";
  std::string s = "skipped " + std::to_string(skipped) +
                  (skipped == 1 ? " step" : " steps");
  std::vector<size_t> order;
  for (size_t k = 0; k < counts.size() && k < params.size(); ++k)
    if (counts[k] > 0)
      order.push_back(k);
  // Most often non-finite first; ties in parameter order.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return counts[a] > counts[b]; });
  constexpr size_t kNamed = 6;
  for (size_t i = 0; i < order.size() && i < kNamed; ++i)
    s += (i ? ", " : "; ") + params[order[i]] +
         (i ? " in " : " non-finite in ") + std::to_string(counts[order[i]]);
  if (order.size() > kNamed)
    s += ", and " + std::to_string(order.size() - kNamed) + " more";
  return s;
}

std::string progressText(const StepRecord &r, int64_t totalSteps) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "step %lld/%lld  epoch %.2f  loss %.4f  scale %g  lr %.3g  "
                "%.3g ms/step  %.0f samples/s%s",
                (long long)r.step, (long long)totalSteps, r.epoch, r.loss,
                r.lossScale, r.lr, r.stepTimeMs, r.samplesPerSec,
                r.skippedTotal ? ("  skipped " + std::to_string(r.skippedTotal))
                                     .c_str()
                               : "");
  std::string text = buf;
  if (r.skipped && r.nonFiniteTotal > 0) {
    text += "  non-finite: ";
    for (size_t i = 0; i < r.nonFiniteParams.size(); ++i)
      text += (i ? ", " : "") + r.nonFiniteParams[i];
    if (r.nonFiniteTotal > int64_t(r.nonFiniteParams.size()))
      text += " (+" +
              std::to_string(r.nonFiniteTotal - int64_t(r.nonFiniteParams.size())) +
              " more)";
  }
  return text;
}

Reporter::Reporter(const std::string &metricsPath, bool append)
    : path_(metricsPath), tty_(::isatty(STDOUT_FILENO)) {
  if (!metricsPath.empty()) {
    metrics_ = std::fopen(metricsPath.c_str(), append ? "a" : "w");
    if (!metrics_)
      fail(metricsPath, std::string("cannot write metrics: ") +
                            std::strerror(errno));
  }
}

Reporter::~Reporter() {
  endProgress();
  if (metrics_ && std::fclose(metrics_) != 0)
    warnWriteFailed(errno);
}

void Reporter::writeJson(const std::string &line) {
  if (keep_)
    lines_.push_back(line);
  if (!metrics_)
    return;
  std::fputs(line.c_str(), metrics_);
  std::fputc('\n', metrics_);
  // A full disk (or --metrics /dev/full) lost every line silently. Said
  // once; the run goes on (its checkpoints say for themselves whether
  // they were written).
  bool failed = std::fflush(metrics_) != 0 || std::ferror(metrics_);
  if (failed)
    warnWriteFailed(errno);
}

void Reporter::warnWriteFailed(int err) {
  if (writeFailed_)
    return;
  writeFailed_ = true;
  std::fflush(stdout);
  std::fprintf(stderr, "warning: %s: writing metrics failed (%s); lines "
                       "from here on may be lost\n",
               path_.c_str(), std::strerror(err));
}

void Reporter::log(const StepRecord &r, int64_t totalSteps) {
  writeJson(metricsJson(r));
  std::string text = progressText(r, totalSteps);
  if (tty_) {
    std::printf("\r\033[K%s", text.c_str());
    openLine_ = true;
  } else {
    std::printf("%s\n", text.c_str());
  }
  std::fflush(stdout);
}

void Reporter::endProgress() {
  if (openLine_) {
    std::printf("\n");
    std::fflush(stdout);
    openLine_ = false;
  }
}

} // namespace ampc::rt
