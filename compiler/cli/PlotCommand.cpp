//===- PlotCommand.cpp - `ampc plot METRICS.jsonl... -o run.svg` -----------===//
//
// Draws metrics files of training runs (runtime/train/Plot.h, the same code
// the training binary's --plot runs): loss, eval accuracy, loss scale with
// skipped steps, grad norm with clipping, learning rate and step time,
// several runs overlaid. Needs gnuplot (Debian gnuplot-nox).
//
//===----------------------------------------------------------------------===//
#include "compiler/cli/Command.h"
#include "runtime/data/DataError.h"
#include "runtime/train/Plot.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runPlot();

ampc::cli::Command plotCommand(
    "plot", "Plot training metrics files (gnuplot): loss, loss scale, "
            "grad norm, lr, step time",
    runPlot);

cl::list<std::string> inputs(cl::Positional, cl::OneOrMore,
                             cl::desc("<metrics.jsonl>..."),
                             cl::sub(plotCommand),
                             cl::cat(ampc::cli::category()));
cl::opt<std::string> output("o", cl::Required,
                            cl::desc("Output image: FILE.svg or FILE.png"),
                            cl::value_desc("file"), cl::sub(plotCommand),
                            cl::cat(ampc::cli::category()));
cl::opt<std::string> title("title", cl::init(""),
                           cl::desc("Title over the panels"),
                           cl::sub(plotCommand),
                           cl::cat(ampc::cli::category()));
cl::list<std::string>
    labels("labels", cl::CommaSeparated,
           cl::desc("Legend entries, one per file in order (default: each "
                    "file's name without its extension)"),
           cl::sub(plotCommand), cl::cat(ampc::cli::category()));
cl::opt<int> width("width", cl::init(1200),
                   cl::desc("Image width in pixels (default 1200; 300 "
                            "pixels of height per row of two panels)"),
                   cl::sub(plotCommand), cl::cat(ampc::cli::category()));

int runPlot() {
  namespace plot = ampc::rt::plot;
  try {
    if (!labels.empty() && labels.size() != inputs.size())
      ampc::rt::fail("--labels", std::to_string(labels.size()) +
                                     " labels for " +
                                     std::to_string(inputs.size()) + " files");
    if (width < 200 || width > 10000)
      ampc::rt::fail("--width", "must be between 200 and 10000");
    plot::PlotOptions o;
    o.output = output;
    o.title = title;
    o.width = width;
    plot::imageType(o.output);
    std::vector<plot::RunMetrics> runs;
    for (size_t i = 0; i < inputs.size(); ++i)
      runs.push_back(
          plot::readMetrics(inputs[i], labels.empty() ? "" : labels[i]));
    plot::renderPlot(runs, o);
    outs() << "wrote " << o.output << " (" << runs.size() << " run"
           << (runs.size() == 1 ? "" : "s") << ", "
           << plot::panelTitles(runs).size() << " panels)\n";
    return 0;
  } catch (const ampc::rt::InputError &e) {
    errs() << "error: " << e.what() << "\n";
    return 2;
  }
}
} // namespace
