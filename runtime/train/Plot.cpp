//===- Plot.cpp - Plots of training runs (gnuplot) -----------------------===//
#include "runtime/train/Plot.h"
#include "runtime/data/DataError.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ampc::rt::plot {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double number(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : kNaN;
}

// A gnuplot single-quoted string (no escapes inside but '' for ').
std::string quoted(const std::string &s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else if (c != '\n' && c != '\r')
      out += c;
  }
  return out + "'";
}

// Data files: "?" is gnuplot's missing value (set datafile missing).
std::string cell(double v) {
  if (!std::isfinite(v))
    return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool anyStep(const std::vector<RunMetrics> &runs,
             bool (*pred)(const RunMetrics::Step &)) {
  for (const RunMetrics &r : runs)
    for (const RunMetrics::Step &s : r.steps)
      if (pred(s))
        return true;
  return false;
}

bool hasAccuracy(const std::vector<RunMetrics> &runs) {
  for (const RunMetrics &r : runs)
    for (const RunMetrics::Eval &e : r.evals)
      if (std::isfinite(e.accuracy))
        return true;
  return false;
}

bool hasEvalLoss(const RunMetrics &r) {
  for (const RunMetrics::Eval &e : r.evals)
    if (std::isfinite(e.loss))
      return true;
  return false;
}

bool clips(const RunMetrics::Step &s) {
  return std::isfinite(s.clipNorm) && s.clipNorm > 0;
}

// A run without a loss scaler (scale 1 throughout): left out of the loss
// scale panel, where its line at 2^0 would only squash the others.
bool unscaled(const RunMetrics &r) {
  for (const RunMetrics::Step &s : r.steps)
    if (std::isfinite(s.lossScale) && s.lossScale != 1.0)
      return false;
  return true;
}

void writeData(const std::vector<RunMetrics> &runs, const fs::path &dir) {
  for (size_t i = 0; i < runs.size(); ++i) {
    std::ofstream d(dir / ("run" + std::to_string(i) + ".dat"));
    // skips: steps skipped since the previous logged step, this one
    // included (from skipped_total, so skips between log steps show).
    d << "# step loss loss_scale skips grad_norm clip_coef clip_norm lr "
         "step_time_ms\n";
    double before = 0;
    for (const RunMetrics::Step &s : runs[i].steps) {
      double skips = s.skipped ? 1 : 0;
      if (std::isfinite(s.skippedTotal)) {
        skips = std::max(skips, s.skippedTotal - before);
        before = s.skippedTotal;
      }
      d << s.step << ' ' << cell(s.loss) << ' '
        << cell(s.lossScale > 0 ? s.lossScale : kNaN) << ' ' << cell(skips)
        << ' ' << cell(s.gradNorm) << ' '
        << cell(s.clipCoef) << ' ' << cell(s.clipNorm) << ' ' << cell(s.lr)
        << ' ' << cell(s.stepTimeMs) << '\n';
    }
    std::ofstream e(dir / ("run" + std::to_string(i) + ".eval"));
    e << "# step eval_loss eval_accuracy\n";
    for (const RunMetrics::Eval &v : runs[i].evals)
      e << v.step << ' ' << cell(v.loss) << ' ' << cell(v.accuracy) << '\n';
    if (!d || !e)
      fail(dir.string(), "cannot write the plot's data files");
  }
}

// gnuplot's reason from its stderr: it prints the offending script line,
// a caret, then the reason; the last non-blank line is the reason.
std::string gnuplotReason(const fs::path &p) {
  std::ifstream in(p);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line.find_first_not_of(" \t^") != std::string::npos)
      last = line;
  return last;
}

} // namespace

RunMetrics parseMetrics(std::string_view text, const std::string &source,
                        std::string label) {
  RunMetrics run;
  run.label = std::move(label);
  std::map<int64_t, RunMetrics::Step> steps; // the last of a step wins
  std::map<int64_t, RunMetrics::Eval> evals;
  size_t lineNo = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number())
      fail(source, "line " + std::to_string(lineNo) +
                       " is not a metrics record (a JSON object with \"step\")");
    const int64_t step = j["step"].get<int64_t>();
    if (j.contains("eval_loss")) {
      RunMetrics::Eval e;
      e.step = step;
      e.loss = number(j, "eval_loss");
      e.accuracy = number(j, "eval_accuracy");
      evals[step] = e;
    } else if (j.contains("loss")) {
      RunMetrics::Step s;
      s.step = step;
      s.loss = number(j, "loss");
      s.lossScale = number(j, "loss_scale");
      s.gradNorm = number(j, "grad_norm");
      s.clipCoef = number(j, "clip_coef");
      s.clipNorm = number(j, "clip_norm");
      s.lr = number(j, "lr");
      s.stepTimeMs = number(j, "step_time_ms");
      s.skipped = number(j, "skipped") > 0;
      s.skippedTotal = number(j, "skipped_total");
      steps[step] = s;
    }
  }
  if (steps.empty() && evals.empty())
    fail(source, "no metrics records (write them with --metrics FILE)");
  for (auto &[k, s] : steps)
    run.steps.push_back(s);
  for (auto &[k, e] : evals)
    run.evals.push_back(e);
  return run;
}

RunMetrics readMetrics(const std::string &path, std::string label) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, std::string("cannot read metrics: ") + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  if (label.empty())
    label = fs::path(path).stem().string();
  return parseMetrics(ss.str(), path, std::move(label));
}

std::string imageType(const std::string &output) {
  std::string ext = fs::path(output).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".svg" || ext == ".png")
    return ext.substr(1);
  fail(output, "unknown image type '" + ext + "' (use .svg or .png)");
}

std::string findGnuplot() {
  if (const char *env = std::getenv("AMPC_GNUPLOT"); env && *env) {
    if (::access(env, X_OK) != 0)
      fail("gnuplot", std::string("AMPC_GNUPLOT=") + env +
                          " is not an executable");
    return env;
  }
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos
                                             ? std::string::npos
                                             : end - start);
    std::string cand = (dir.empty() ? "." : dir) + "/gnuplot";
    if (::access(cand.c_str(), X_OK) == 0)
      return cand;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  fail("gnuplot", "not found on PATH; install the Debian package gnuplot-nox "
                  "(apt-get install gnuplot-nox) to draw plots");
}

std::vector<std::string> panelTitles(const std::vector<RunMetrics> &runs) {
  std::vector<std::string> t = {"loss"};
  if (hasAccuracy(runs))
    t.push_back("eval accuracy");
  t.push_back("loss scale (log2; x: skipped steps)");
  t.push_back(anyStep(runs, clips)
                  ? "grad norm (dashed: clip threshold; right: clip coef)"
                  : "grad norm");
  t.push_back("learning rate");
  t.push_back("step time (ms)");
  return t;
}

std::string gnuplotScript(const std::vector<RunMetrics> &runs,
                          const PlotOptions &o, const std::string &dataDir) {
  const std::vector<std::string> titles = panelTitles(runs);
  const int rows = int(titles.size() + 1) / 2;
  const bool svg = imageType(o.output) == "svg";
  std::ostringstream g;
  g << "# ampc plot: " << runs.size() << " run(s)\n";
  if (svg)
    g << "set terminal svg size " << o.width << ',' << rows * 300
      << " fixed noenhanced font 'sans,11' background '#ffffff'\n";
  else
    g << "set terminal pngcairo size " << o.width << ',' << rows * 300
      << " noenhanced font 'sans,10' background '#ffffff'\n";
  g << "set output " << quoted(o.output) << "\n";
  g << "set datafile missing '?'\n";
  // Run colours (matplotlib's first eight: familiar, distinguishable).
  const char *colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                           "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  for (int k = 0; k < 8; ++k)
    g << "set linetype " << k + 1 << " lc rgb '" << colours[k]
      << "' lw 1.5\n";
  g << "set linetype cycle 8\n";
  // One step axis for every panel (an eval panel may hold a single point).
  int64_t last = 1;
  for (const RunMetrics &r : runs) {
    for (const RunMetrics::Step &st : r.steps)
      last = std::max(last, st.step);
    for (const RunMetrics::Eval &e : r.evals)
      last = std::max(last, e.step);
  }
  g << "set grid\nset xlabel 'step'\nset key top right\n";
  g << "set xrange [0:" << last << "]\n";
  g << "set multiplot layout " << rows << ",2";
  if (!o.title.empty())
    g << " title " << quoted(o.title);
  g << "\n";
  auto dat = [&](size_t i, const char *ext) {
    return quoted(dataDir + "/run" + std::to_string(i) + ext);
  };
  auto label = [&](size_t i) { return quoted(runs[i].label); };
  auto lc = [](size_t i) { return " lc " + std::to_string(i + 1); };
  const char *sep = ", \\\n     ";
  size_t panel = 0;
  auto begin = [&](const char *ylabel) {
    g << "\nset title " << quoted(titles[panel++]) << "\n";
    g << "set ylabel " << quoted(ylabel) << "\n";
  };

  // Loss: lines, eval loss as points of the same colour.
  begin("loss");
  g << "plot ";
  for (size_t i = 0; i < runs.size(); ++i) {
    g << (i ? sep : "") << dat(i, ".dat") << " using 1:2 with lines"
      << lc(i) << " title " << label(i);
    if (hasEvalLoss(runs[i]))
      g << sep << dat(i, ".eval") << " using 1:2 with points pt 7 ps 1.2"
        << lc(i) << " title " << quoted(runs[i].label + " eval");
  }
  g << "\nunset key\n";

  if (hasAccuracy(runs)) {
    begin("accuracy");
    g << "plot ";
    for (size_t i = 0; i < runs.size(); ++i)
      g << (i ? sep : "") << dat(i, ".eval")
        << " using 1:3 with linespoints pt 7" << lc(i) << " notitle";
    g << "\n";
  }

  // The loss scale, powers of two on a log2 axis; skipped steps as crosses.
  begin("loss scale");
  g << "set logscale y 2\nset format y '2^%L'\n";
  g << "plot ";
  bool allUnscaled = true;
  for (const RunMetrics &r : runs)
    allUnscaled &= unscaled(r);
  bool first = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (unscaled(runs[i]) && !allUnscaled)
      continue;
    g << (first ? "" : sep) << dat(i, ".dat") << " using 1:3 with steps"
      << lc(i) << " notitle" << sep << dat(i, ".dat")
      << " using 1:($4 > 0 ? $3 : NaN) with points pt 2 ps 1.5" << lc(i)
      << " notitle";
    first = false;
  }
  g << "\nunset logscale y\nset format y '% h'\n";

  // Grad norm; the clip threshold dashed; the clip coefficient on y2.
  begin("grad norm");
  const bool clipping = anyStep(runs, clips);
  if (clipping)
    g << "set y2range [0:1.05]\nset y2tics\nset ytics nomirror\n"
         "set y2label 'clip coef'\n";
  g << "plot ";
  for (size_t i = 0; i < runs.size(); ++i) {
    g << (i ? sep : "") << dat(i, ".dat") << " using 1:5 with lines" << lc(i)
      << " notitle";
    bool runClips = false;
    for (const RunMetrics::Step &s : runs[i].steps)
      runClips |= clips(s);
    if (runClips)
      g << sep << dat(i, ".dat") << " using 1:7 with lines dt 2" << lc(i)
        << " notitle" << sep << dat(i, ".dat")
        << " using 1:6 axes x1y2 with lines dt 3" << lc(i) << " notitle";
  }
  g << "\n";
  if (clipping)
    g << "unset y2tics\nunset y2label\nset ytics mirror\n";

  begin("lr");
  g << "set yrange [0:*]\nplot ";
  for (size_t i = 0; i < runs.size(); ++i)
    g << (i ? sep : "") << dat(i, ".dat") << " using 1:8 with lines" << lc(i)
      << " notitle";
  g << "\n";

  begin("ms");
  g << "set autoscale y\nset yrange [0:*]\nplot ";
  for (size_t i = 0; i < runs.size(); ++i)
    g << (i ? sep : "") << dat(i, ".dat") << " using 1:9 with lines" << lc(i)
      << " notitle";
  g << "\nunset multiplot\nset output\n";
  return g.str();
}

void renderPlot(const std::vector<RunMetrics> &runs, const PlotOptions &o) {
  imageType(o.output); // before any work
  if (runs.empty())
    fail(o.output, "no metrics to plot");
  const std::string gnuplot = findGnuplot();
  std::string tmpl =
      (fs::temp_directory_path() / "ampc-plot-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    fail(tmpl, std::string("cannot make a temporary directory: ") +
                   std::strerror(errno));
  const fs::path dir(tmpl);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};

  writeData(runs, dir);
  const fs::path script = dir / "plot.gp", err = dir / "gnuplot.err";
  {
    std::ofstream s(script);
    s << gnuplotScript(runs, o, dir.string());
    if (!s)
      fail(script.string(), "cannot write the gnuplot script");
  }
  std::error_code ec;
  fs::remove(o.output, ec); // so a failed run leaves no stale image

  // gnuplot SCRIPT, stderr to a file, stdout to /dev/null.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string arg0 = gnuplot, arg1 = script.string();
  char *argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, gnuplot.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    fail(gnuplot, std::string("cannot run: ") + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok || !fs::exists(o.output) || fs::file_size(o.output, ec) == 0) {
    std::string why = gnuplotReason(err);
    fail(o.output, "gnuplot failed" + (why.empty() ? "" : ": " + why));
  }
}

} // namespace ampc::rt::plot
