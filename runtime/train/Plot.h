//===- Plot.h - Plots of training runs (gnuplot) -----------------*- C++ -*-===//
//
// Reads metrics files (one JSON object per logged step, Report.h) and draws
// one image of one or more runs: loss (and eval loss), eval accuracy when
// there is one, the loss scale on a log2 axis with skipped steps marked (at
// each logged step that is, or follows, a skipped one; runs without a
// scaler, at scale 1 throughout, are left out of that panel),
// the gradient norm with the clip threshold and clip coefficient, the
// learning rate and the step time. Runs are overlaid, one colour each, with
// a legend.
//
// The drawing is gnuplot's (Debian gnuplot-nox: svg and pngcairo
// terminals): this writes a gnuplot script and one data file per run into a
// temporary directory and runs gnuplot on it. A maintained plotting
// program rather than hand-drawn SVG, and one the training binary can call
// without Python (docs/plots.md says more). `ampc plot` and the training
// binary's --plot both come here; no MLIR, no model.
//
// Errors (an unreadable metrics file, no gnuplot, an unknown image type)
// are rt::InputErrors: one line, exit status 2.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TRAIN_PLOT_H
#define AMPC_RUNTIME_TRAIN_PLOT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ampc::rt::plot {

// One run's metrics. Missing or null values are NaN.
struct RunMetrics {
  std::string label; // the legend entry
  struct Step {
    int64_t step = 0;
    double loss, lossScale, gradNorm, clipCoef, clipNorm, lr, stepTimeMs;
    double skippedTotal; // skipped steps up to this one (the run's count)
    bool skipped = false;
  };
  struct Eval {
    int64_t step = 0;
    double loss, accuracy;
  };
  std::vector<Step> steps; // by step; a step logged twice (a resumed run
  std::vector<Eval> evals; // that logged past its checkpoint): the last
};

// Parses metrics JSONL. Lines with "loss" are steps, lines with
// "eval_loss" evaluations, others are ignored. |source| names the text in
// errors.
RunMetrics parseMetrics(std::string_view text, const std::string &source,
                        std::string label);

// The same from a file; the label defaults to the file's name without its
// directory and extension.
RunMetrics readMetrics(const std::string &path, std::string label = "");

struct PlotOptions {
  std::string output; // .svg or .png
  std::string title;  // over all panels; empty: none
  int width = 1200;   // pixels; the height is 300 per row of two panels
};

// The image type of |output| ("svg", "png"), or an InputError naming it.
std::string imageType(const std::string &output);

// The gnuplot to run: $AMPC_GNUPLOT when set, else `gnuplot` on PATH; an
// InputError (one line naming the Debian package) when there is none.
std::string findGnuplot();

// The gnuplot script drawing |runs| whose data files are
// |dataDir|/run<i>.dat and run<i>.eval (writeData); for tests.
std::string gnuplotScript(const std::vector<RunMetrics> &runs,
                          const PlotOptions &options,
                          const std::string &dataDir);

// The panel titles the script draws for |runs|, in order.
std::vector<std::string> panelTitles(const std::vector<RunMetrics> &runs);

// Draws |runs| into options.output.
void renderPlot(const std::vector<RunMetrics> &runs,
                const PlotOptions &options);

} // namespace ampc::rt::plot

#endif
