//===- PlotTest.cpp - Metrics parsing and the gnuplot script ----------------===//
//
// The image itself is checked end to end (test/e2e/plot.test, gnuplot
// installed); here: what is read from a metrics file and what the script
// asks gnuplot to draw.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/DataError.h"
#include "runtime/train/Plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace ampc::rt::plot {
namespace {

const char *kMetrics =
    R"({"step":1,"loss":2.5,"loss_scale":65536,"grad_norm":null,"clip_coef":1,"skipped":1,"skip_reason":"overflow","nonfinite_params":["w"],"nonfinite_params_total":1,"skipped_total":1,"clip_norm":0.5,"lr":0.01,"step_time_ms":3})"
    "\n"
    R"({"step":2,"loss":2.0,"loss_scale":32768,"grad_norm":4,"clip_coef":0.125,"skipped":0,"skipped_total":1,"clip_norm":0.5,"lr":0.01,"step_time_ms":2})"
    "\n\n"
    // A resumed run logged step 2 again: the later line wins.
    R"({"step":2,"loss":1.5,"loss_scale":32768,"grad_norm":4,"clip_coef":0.125,"skipped":0,"skipped_total":1,"clip_norm":0.5,"lr":0.01,"step_time_ms":2})"
    "\n"
    R"({"step":2,"eval_loss":1.25,"eval_accuracy":0.75,"eval_samples":8})"
    "\n";

TEST(Plot, ParsesStepsAndEvaluations) {
  RunMetrics r = parseMetrics(kMetrics, "m.jsonl", "fp16");
  EXPECT_EQ(r.label, "fp16");
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].step, 1);
  EXPECT_TRUE(r.steps[0].skipped);
  EXPECT_EQ(r.steps[0].lossScale, 65536.0);
  EXPECT_TRUE(std::isnan(r.steps[0].gradNorm)); // null
  EXPECT_EQ(r.steps[0].clipNorm, 0.5);
  EXPECT_EQ(r.steps[1].loss, 1.5);
  EXPECT_FALSE(r.steps[1].skipped);
  EXPECT_EQ(r.steps[1].clipCoef, 0.125);
  ASSERT_EQ(r.evals.size(), 1u);
  EXPECT_EQ(r.evals[0].loss, 1.25);
  EXPECT_EQ(r.evals[0].accuracy, 0.75);
}

TEST(Plot, BadMetricsAreOneLineErrors) {
  try {
    parseMetrics("{\"step\":1,\"loss\":2}\nnot json\n", "m.jsonl", "x");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_STREQ(e.what(), "m.jsonl: line 2 is not a metrics record (a JSON "
                           "object with \"step\")");
  }
  EXPECT_THROW(parseMetrics("\n", "empty.jsonl", "x"), InputError);
  EXPECT_THROW(readMetrics("/nonexistent/m.jsonl"), InputError);
  EXPECT_EQ(imageType("a/run.SVG"), "svg");
  EXPECT_EQ(imageType("run.png"), "png");
  EXPECT_THROW(imageType("run.pdf"), InputError);
  EXPECT_THROW(imageType("run"), InputError);
}

TEST(Plot, MissingGnuplotIsAnInputError) {
  ::setenv("AMPC_GNUPLOT", "/nonexistent/gnuplot", 1);
  EXPECT_THROW(findGnuplot(), InputError);
  ::unsetenv("AMPC_GNUPLOT");
  const char *path = std::getenv("PATH");
  std::string saved = path ? path : "";
  ::setenv("PATH", "/nonexistent", 1);
  try {
    findGnuplot();
    ADD_FAILURE() << "found a gnuplot in /nonexistent";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos);
  }
  ::setenv("PATH", saved.c_str(), 1);
}

TEST(Plot, PanelsFollowTheMetrics) {
  RunMetrics clipped = parseMetrics(kMetrics, "m.jsonl", "fp16");
  RunMetrics plain = parseMetrics(
      R"({"step":1,"loss":2,"loss_scale":1,"grad_norm":1,"clip_coef":1,"skipped":0,"lr":0.1,"step_time_ms":1})",
      "p.jsonl", "fp32");
  EXPECT_EQ(panelTitles({plain}),
            (std::vector<std::string>{"loss", "loss scale (log2; x: skipped steps)",
                                      "grad norm", "learning rate",
                                      "step time (ms)"}));
  EXPECT_EQ(panelTitles({plain, clipped}),
            (std::vector<std::string>{
                "loss", "eval accuracy", "loss scale (log2; x: skipped steps)",
                "grad norm (dashed: clip threshold; right: clip coef)",
                "learning rate", "step time (ms)"}));

  // Two runs overlaid: a legend entry each (a quote escaped), the loss
  // scale on a log2 axis, skipped steps as points, the clip threshold and
  // coefficient for the run that clips only.
  plain.label = "it's fp32";
  PlotOptions o;
  o.output = "out.svg";
  o.title = "mlp";
  std::string g = gnuplotScript({clipped, plain}, o, "/d");
  for (const std::string &t : panelTitles({clipped, plain}))
    EXPECT_NE(g.find("set title '" + t + "'"), std::string::npos) << t;
  EXPECT_NE(g.find("set terminal svg size 1200,900 fixed"), std::string::npos);
  EXPECT_NE(g.find("set multiplot layout 3,2 title 'mlp'"), std::string::npos);
  EXPECT_NE(g.find("'/d/run0.dat' using 1:2 with lines lc 1 title 'fp16'"),
            std::string::npos);
  EXPECT_NE(g.find("'/d/run1.dat' using 1:2 with lines lc 2 title 'it''s fp32'"),
            std::string::npos);
  EXPECT_NE(g.find("'/d/run0.eval' using 1:2 with points"), std::string::npos);
  EXPECT_EQ(g.find("'/d/run1.eval' using 1:2"), std::string::npos); // none
  EXPECT_NE(g.find("set logscale y 2"), std::string::npos);
  EXPECT_NE(g.find("'/d/run0.dat' using 1:($4 > 0 ? $3 : NaN) with points"),
            std::string::npos);
  // The unscaled run (scale 1 throughout) is not on the loss scale panel,
  // unless no run has a scaler.
  EXPECT_EQ(g.find("'/d/run1.dat' using 1:3"), std::string::npos);
  EXPECT_NE(gnuplotScript({plain}, o, "/d").find("'/d/run0.dat' using 1:3"),
            std::string::npos);
  EXPECT_NE(g.find("'/d/run0.dat' using 1:7 with lines dt 2"), std::string::npos);
  EXPECT_NE(g.find("'/d/run0.dat' using 1:6 axes x1y2"), std::string::npos);
  EXPECT_EQ(g.find("'/d/run1.dat' using 1:7"), std::string::npos);
  o.output = "out.png";
  EXPECT_NE(gnuplotScript({plain}, o, "/d").find("set terminal pngcairo size 1200,900"),
            std::string::npos);
}

} // namespace
} // namespace ampc::rt::plot
