//===- CpuActivationTest.cpp - issue 13's activations and pointwise ops ---===//
//
// silu, leaky_relu, elu, softplus, abs, clamp, erf, sin, cos, reciprocal,
// maximum/minimum, where, masked_fill and their backward ops in the CPU kernel library: rounded
// once from the float formula, accurate against the exact function, and the
// PyTorch edge cases (NaN, ties, thresholds, inclusive clamp bounds) with
// exact expected values.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

namespace ampc::cpu::test {
namespace {

struct UnaryCase {
  const char *op;
  float (*f)(float);     // the float formula (rounded once afterwards)
  double (*ref)(double); // the exact function
  double lo, hi;
};

const UnaryCase kUnary[] = {
    {"graph.silu", [](float x) { return x / (1.0f + std::exp(-x)); },
     [](double x) { return x / (1.0 + std::exp(-x)); }, -6, 6},
    {"graph.abs", [](float x) { return std::fabs(x); },
     [](double x) { return std::fabs(x); }, -3, 3},
    {"graph.erf", [](float x) { return std::erf(x); },
     [](double x) { return std::erf(x); }, -3, 3},
    {"graph.sin", [](float x) { return std::sin(x); },
     [](double x) { return std::sin(x); }, -4, 4},
    {"graph.cos", [](float x) { return std::cos(x); },
     [](double x) { return std::cos(x); }, -4, 4},
    {"graph.reciprocal", [](float x) { return 1.0f / x; },
     [](double x) { return 1.0 / x; }, 0.05, 9},
};

TEST(CpuActivation, UnaryExactAndAccurate) {
  for (const UnaryCase &c : kUnary)
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(std::string(c.op) + " " + name(t));
      Tensor x = randomTensor(t, {3, 37}, 17, c.lo, c.hi), y(t, {3, 37});
      run(c.op, {&x}, {&y});
      std::vector<double> exact(size_t(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i)
        exact[i] = roundFromFloat(t, c.f(float(x.get(i))));
      expectEqual(y, exact, "rounded once from float");
      for (int64_t i = 0; i < x.numel(); ++i) {
        double want = c.ref(x.get(i));
        EXPECT_LE(std::fabs(y.get(i) - want),
                  (t == DType::F32 ? 4 : 1) * ulp(t, want))
            << i << " x=" << x.get(i);
      }
    }
}

TEST(CpuActivation, LeakyReluSlopeAndNaN) {
  Tensor x = fromValues(DType::F32, {4}, {-2.0, 0.0, 3.0, NAN}), y(DType::F32, {4});
  run("graph.leaky_relu", {&x}, {&y}); // default negative_slope 0.01
  expectEqual(y, {double(-2.0f * 0.01f), 0.0, 3.0, NAN}, "slope 0.01");
  run("graph.leaky_relu", {&x}, {&y}, Attrs{{"negative_slope", 0.25}});
  expectEqual(y, {-0.5, 0.0, 3.0, NAN}, "slope 0.25");
  // Backward: g where x > 0, else g * slope (x == 0 takes the slope).
  Tensor g = fromValues(DType::F32, {4}, {4.0, 4.0, 4.0, 4.0}), d(DType::F32, {4});
  run("graph.leaky_relu_backward", {&x, &g}, {&d}, Attrs{{"negative_slope", 0.25}});
  expectEqual(d, {1.0, 1.0, 4.0, 1.0}, "leaky_relu_backward");
}

// elu as PyTorch's kernel: x <= 0 takes expm1(x * input_scale) * (alpha *
// scale), the coefficients formed in float; SELU's constants; CELU's 1 /
// alpha input scale. Backward: g * scale, or g * input_scale * alpha *
// scale * exp(x * input_scale).
TEST(CpuActivation, EluSeluCelu) {
  Tensor x = fromValues(DType::F32, {4}, {-2.0, 0.0, 3.0, -0.5}),
         y(DType::F32, {4}), g = fromValues(DType::F32, {4}, {1, 1, 1, 2}),
         d(DType::F32, {4});
  run("graph.elu", {&x}, {&y});
  expectEqual(y, {double(std::expm1(-2.0f)), 0.0, 3.0,
                  double(std::expm1(-0.5f))},
              "elu");
  const float a = float(1.6732632423543772), s = float(1.0507009873554805);
  Attrs selu{{"alpha", 1.6732632423543772}, {"scale", 1.0507009873554805}};
  run("graph.elu", {&x}, {&y}, selu);
  expectEqual(y, {double(std::expm1(-2.0f) * (a * s)), 0.0, double(3.0f * s),
                  double(std::expm1(-0.5f) * (a * s))},
              "selu");
  Attrs celu{{"alpha", 0.5}, {"input_scale", 2.0}};
  run("graph.elu", {&x}, {&y}, celu);
  expectEqual(y, {double(std::expm1(-4.0f) * 0.5f), 0.0, 3.0,
                  double(std::expm1(-1.0f) * 0.5f)},
              "celu");
  run("graph.elu_backward", {&x, &g}, {&d}, celu);
  expectEqual(d, {double(1.0f * 2.0f * 0.5f * std::exp(-4.0f)),
                  double(1.0f * 2.0f * 0.5f * std::exp(0.0f)), 1.0,
                  double(2.0f * 2.0f * 0.5f * std::exp(-1.0f))},
              "celu backward");
}

TEST(CpuActivation, SoftplusThresholdAndBeta) {
  Tensor x = fromValues(DType::F32, {4}, {0.0, 25.0, 0.4, 0.6}), y(DType::F32, {4});
  run("graph.softplus", {&x}, {&y});
  EXPECT_EQ(y.get(0), double(std::log1p(std::exp(0.0f))));
  EXPECT_EQ(y.get(1), 25.0); // beta x > threshold 20: x itself
  run("graph.softplus", {&x}, {&y}, Attrs{{"beta", 2.0}, {"threshold", 1.0}});
  EXPECT_EQ(y.get(2), double(std::log1p(std::exp(0.4f * 2.0f)) / 2.0f));
  EXPECT_EQ(y.get(3), double(0.6f)); // 2 * 0.6 > 1
  Tensor g = fromValues(DType::F32, {4}, {3.0, 3.0, 3.0, 3.0}), d(DType::F32, {4});
  run("graph.softplus_backward", {&x, &g}, {&d}, Attrs{{"beta", 2.0}, {"threshold", 1.0}});
  float z = std::exp(0.4f * 2.0f);
  EXPECT_EQ(d.get(2), double(3.0f * z / (z + 1.0f)));
  EXPECT_EQ(d.get(3), 3.0);
  EXPECT_EQ(d.get(0), 1.5); // sigmoid(0) = 1/2
}

TEST(CpuActivation, ClampBoundsAndGradient) {
  std::vector<double> v = {-3.0, -1.0, 0.5, 1.0, 2.0, NAN};
  Tensor x = fromValues(DType::F16, {6}, v), y(DType::F16, {6});
  run("graph.clamp", {&x}, {&y}, Attrs{{"min", -1.0}, {"max", 1.0}});
  expectEqual(y, {-1.0, -1.0, 0.5, 1.0, 1.0, NAN}, "both bounds");
  run("graph.clamp", {&x}, {&y}, Attrs{{"min", 0.0}});
  expectEqual(y, {0.0, 0.0, 0.5, 1.0, 2.0, NAN}, "min only");
  run("graph.clamp", {&x}, {&y}, Attrs{{"max", 0.0}});
  expectEqual(y, {-3.0, -1.0, 0.0, 0.0, 0.0, NAN}, "max only");
  run("graph.clamp", {&x}, {&y}, Attrs{{"min", 1.0}, {"max", -1.0}});
  expectEqual(y, {-1.0, -1.0, -1.0, -1.0, -1.0, NAN}, "min > max gives max");
  // The bounds are inclusive for the gradient (PyTorch's clamp_backward).
  Tensor g = fromValues(DType::F16, {6}, {2, 2, 2, 2, 2, 2}), d(DType::F16, {6});
  run("graph.clamp_backward", {&x, &g}, {&d}, Attrs{{"min", -1.0}, {"max", 1.0}});
  expectEqual(d, {0.0, 2.0, 2.0, 2.0, 0.0, 0.0}, "clamp_backward");
  run("graph.clamp_backward", {&x, &g}, {&d}, Attrs{{"max", 0.5}});
  expectEqual(d, {2.0, 2.0, 2.0, 0.0, 0.0, 0.0}, "clamp_backward max only");
}

TEST(CpuActivation, MaximumMinimumNaNBroadcastAndTies) {
  Tensor a = fromValues(DType::BF16, {2, 3}, {1.0, NAN, -2.0, 4.0, 0.5, 3.0});
  Tensor b = fromValues(DType::BF16, {3}, {2.0, 0.0, NAN});
  Tensor mx(DType::BF16, {2, 3}), mn(DType::BF16, {2, 3});
  run("graph.maximum", {&a, &b}, {&mx});
  run("graph.minimum", {&a, &b}, {&mn});
  expectEqual(mx, {2.0, NAN, NAN, 4.0, 0.5, NAN}, "maximum");
  expectEqual(mn, {1.0, NAN, NAN, 2.0, 0.0, NAN}, "minimum");
  // d/da maximum(a, b): g where a > b, g/2 on a tie, 0 where a < b.
  Tensor x = fromValues(DType::F32, {3}, {1.0, 2.0, 3.0});
  Tensor o = fromValues(DType::F32, {3}, {2.0, 2.0, 2.0});
  Tensor g = fromValues(DType::F32, {3}, {6.0, 6.0, 6.0}), d(DType::F32, {3});
  run("graph.maximum_backward", {&x, &o, &g}, {&d});
  expectEqual(d, {0.0, 3.0, 6.0}, "maximum_backward");
}

TEST(CpuActivation, WhereBroadcastsAnIntegerCondition) {
  Tensor c = fromValues(DType::I64, {2, 1}, {0, 7});
  Tensor x = fromValues(DType::F16, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = fromValues(DType::F16, {3}, {-1, -2, -3}), z(DType::F16, {2, 3});
  run("graph.where", {&c, &x, &y}, {&z});
  expectEqual(z, {-1, -2, -3, 4, 5, 6}, "where");
  Tensor c32 = fromValues(DType::I32, {3}, {1, 0, -1});
  run("graph.where", {&c32, &x, &y}, {&z});
  expectEqual(z, {1, -2, 3, 4, -2, 6}, "where i32");
  Tensor f(DType::F32, {3});
  EXPECT_THROW(run("graph.where", {&f, &x, &y}, {&z}), std::invalid_argument);
}

TEST(CpuActivation, MaskedFillRoundsTheValueOnce) {
  Tensor x = fromValues(DType::BF16, {2, 2}, {1, 2, 3, 4});
  Tensor m = fromValues(DType::I32, {2}, {1, 0}), y(DType::BF16, {2, 2});
  run("graph.masked_fill", {&x, &m}, {&y}, Attrs{{"value", 0.1}});
  double v = roundFromFloat(DType::BF16, 0.1f);
  expectEqual(y, {v, 2, v, 4}, "masked_fill");
}

// l1 / smooth_l1 / huber (PyTorch's formulas) with each reduction, on
// values whose losses are exact in float.
TEST(CpuActivation, RegressionLossesAndReductions) {
  Tensor x = fromValues(DType::F32, {2, 2}, {0.0, 1.0, -3.0, 0.25});
  Tensor t = fromValues(DType::F32, {2, 2}, {0.5, -1.0, 0.0, 0.25});
  // d = x - t = -0.5, 2, -3, 0.
  Tensor s(DType::F32, {}), e(DType::F32, {2, 2});
  run("graph.l1_loss", {&x, &t}, {&s});
  EXPECT_EQ(s.get(0), 5.5 / 4);
  run("graph.l1_loss", {&x, &t}, {&s}, Attrs{{"reduction", "sum"}});
  EXPECT_EQ(s.get(0), 5.5);
  run("graph.l1_loss", {&x, &t}, {&e}, Attrs{{"reduction", "none"}});
  expectEqual(e, {0.5, 2, 3, 0}, "l1 none");
  // smooth_l1, beta 1: 0.5 d^2 below 1, |d| - 0.5 above.
  run("graph.smooth_l1_loss", {&x, &t}, {&e}, Attrs{{"reduction", "none"}});
  expectEqual(e, {0.125, 1.5, 2.5, 0}, "smooth_l1 none");
  run("graph.smooth_l1_loss", {&x, &t}, {&s}, Attrs{{"beta", 0.0}});
  EXPECT_EQ(s.get(0), 5.5 / 4); // beta 0 is l1
  run("graph.smooth_l1_loss", {&x, &t}, {&s},
      Attrs{{"beta", 4.0}, {"reduction", "sum"}});
  EXPECT_EQ(s.get(0), (0.25 + 4 + 9) / 8); // 0.5 d^2 / 4 everywhere
  // huber, delta 2: 0.5 d^2 below 2, 2 (|d| - 1) from 2 on.
  run("graph.huber_loss", {&x, &t}, {&e},
      Attrs{{"delta", 2.0}, {"reduction", "none"}});
  expectEqual(e, {0.125, 2, 4, 0}, "huber none");
  run("graph.huber_loss", {&x, &t}, {&s}, Attrs{{"delta", 2.0}});
  EXPECT_EQ(s.get(0), 6.125 / 4);
  EXPECT_THROW(run("graph.l1_loss", {&x, &t}, {&s}, Attrs{{"reduction", "max"}}),
               std::invalid_argument);
}

TEST(CpuActivation, SiluBackwardMatchesFiniteDifferences) {
  Tensor x = randomTensor(DType::F32, {40}, 5, -6, 6);
  Tensor g = randomTensor(DType::F32, {40}, 6, -1, 1), d(DType::F32, {40});
  run("graph.silu_backward", {&x, &g}, {&d});
  std::vector<double> xs(40), gs(40);
  for (int i = 0; i < 40; ++i) xs[i] = x.get(i), gs[i] = g.get(i);
  auto silu = [](const std::vector<double> &v) {
    std::vector<double> y(v.size());
    for (size_t i = 0; i < v.size(); ++i) y[i] = v[i] / (1.0 + std::exp(-v[i]));
    return y;
  };
  expectClose(d, numericVjp(silu, xs, gs), 1e-6, 1e-5, "silu'");
}

} // namespace
} // namespace ampc::cpu::test
