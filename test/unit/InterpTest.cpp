//===- InterpTest.cpp - Reference interpreter kernels and numerics --------===//
//
// Forward ops against hand-computed values; typed numerics (half inputs,
// FP32 accumulation) against values worked out bit by bit; backward ops
// against central differences of their forward op in FP64.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/interp/GradCheck.h"
#include "compiler/interp/Interpreter.h"
#include "runtime/numerics/Dropout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace ampc::interp;

namespace {

class InterpTest : public ::testing::Test {
protected:
  std::unique_ptr<MLIRContext> context = ampc::createContext();

  // Parses |ir| (backward ops are not registered here: they are written in
  // generic form and the module is not verified) and runs its @f.
  std::vector<Tensor> run(const std::string &ir, std::vector<Tensor> args,
                          InterpOptions options = {}) {
    ParserConfig config(context.get(), /*verifyAfterParse=*/false);
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, config);
    EXPECT_TRUE(module) << ir;
    if (!module)
      return {};
    auto f = module->lookupSymbol<func::FuncOp>("f");
    Interpreter interp(options);
    FailureOr<std::vector<Tensor>> r = interp.runFunction(f, args);
    EXPECT_TRUE(succeeded(r)) << ir;
    return succeeded(r) ? *r : std::vector<Tensor>{};
  }
};

Tensor f32(Shape s, std::vector<double> v) {
  return Tensor::floats(std::move(s), std::move(v));
}

void expectNear(const Tensor &t, const std::vector<double> &want,
                double tol = 1e-6) {
  ASSERT_EQ(t.f.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_NEAR(t.f[k], want[k], tol) << "element " << k;
}

TEST_F(InterpTest, Softmax) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      %y = graph.softmax %x {axis = -1} : tensor<2x3xf32>
      %z = graph.log_softmax %x {axis = 0} : tensor<2x3xf32>
      return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>
    })",
               {f32({2, 3}, {1, 2, 3, 5, 5, 5})});
  ASSERT_EQ(r.size(), 2u);
  double third = 1.0 / 3.0;
  expectNear(r[0], {0.09003057317038046, 0.24472847105479767,
                    0.6652409557748219, third, third, third});
  // Column softmax of (1, 5): log(1 / (1 + e^4)) and log(e^4 / (1 + e^4)).
  double a = -std::log1p(std::exp(4.0)), b = 4.0 + a;
  expectNear(r[1], {a, -std::log1p(std::exp(3.0)), -std::log1p(std::exp(2.0)),
                    b, 3.0 - std::log1p(std::exp(3.0)),
                    2.0 - std::log1p(std::exp(2.0))},
             1e-6);
  // Typed f32: every result is a float.
  for (double v : r[0].f)
    EXPECT_EQ(v, double(float(v)));
}

TEST_F(InterpTest, LayerNorm) {
  auto r = run(R"(
    func.func @f(%x: tensor<1x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
      %y = graph.layer_norm %x, %w, %b {eps = 1.0e-05} : tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4xf32>
      return %y : tensor<1x4xf32>
    })",
               {f32({1, 4}, {1, 2, 3, 4}), f32({4}, {1, 1, 2, 2}),
                f32({4}, {0, 0.5, 0, -1})});
  expectNear(r[0], {-1.3416354199689269, 0.052788193343691, 0.894423613312618,
                    1.6832708399378538});
}

TEST_F(InterpTest, CrossEntropyIgnoreIndexAndLabelSmoothing) {
  auto r = run(R"(
    func.func @f(%z: tensor<3x3xf32>, %y: tensor<3xi64>) -> tensor<f32> {
      %l = graph.cross_entropy %z, %y {label_smoothing = 0.1} : tensor<3x3xf32>, tensor<3xi64> -> tensor<f32>
      return %l : tensor<f32>
    })",
               {f32({3, 3}, {0, 0, 0, 1, 2, 3, 5, 5, 5}),
                Tensor::ints({3}, {0, 2, -100})});
  // Row 0: log 3; row 1: 0.9 * nll + 0.1 * mean(-log p); row 2 ignored.
  expectNear(r[0], {0.8031091265562452});
}

TEST_F(InterpTest, Conv2dStridePaddingGroups) {
  std::vector<double> x(18);
  for (int k = 0; k < 18; ++k)
    x[k] = k;
  auto r = run(R"(
    func.func @f(%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x2x2xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
      %y = graph.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 2} : tensor<1x2x3x3xf32>, tensor<2x1x2x2xf32>, tensor<2xf32> -> tensor<1x2x2x2xf32>
      return %y : tensor<1x2x2x2xf32>
    })",
               {f32({1, 2, 3, 3}, x), f32({2, 1, 2, 2}, {1, 2, 3, 4, -1, 0, 0, 1}),
                f32({2}, {0.5, -0.5})});
  expectNear(r[0], {0.5, 11.5, 30.5, 67.5, 8.5, 10.5, 14.5, 3.5});
}

TEST_F(InterpTest, PoolingPaddingNeverWinsAndCountsInAverage) {
  std::vector<double> neg, pos;
  for (int k = 1; k <= 9; ++k)
    neg.push_back(-k), pos.push_back(k);
  const char *ir = R"(
    func.func @f(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
      %y = graph.OP %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x1x3x3xf32> -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    })";
  std::string maxIr = ir, avgIr = ir;
  maxIr.replace(maxIr.find("OP"), 2, "max_pool2d");
  avgIr.replace(avgIr.find("OP"), 2, "avg_pool2d");
  expectNear(run(maxIr, {f32({1, 1, 3, 3}, neg)})[0], {-1, -2, -4, -5});
  expectNear(run(avgIr, {f32({1, 1, 3, 3}, pos)})[0], {0.25, 1.25, 2.75, 7});
}

TEST_F(InterpTest, AttentionCausal) {
  const char *ir = R"(
    func.func @f(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x2x1xf32>, %v: tensor<1x1x2x1xf32>) -> tensor<1x1x2x1xf32> {
      %o = graph.scaled_dot_product_attention %q, %k, %v ATTR : tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32> -> tensor<1x1x2x1xf32>
      return %o : tensor<1x1x2x1xf32>
    })";
  std::vector<Tensor> args = {f32({1, 1, 2, 1}, {1, 1}),
                              f32({1, 1, 2, 1}, {0, std::log(3.0)}),
                              f32({1, 1, 2, 1}, {1, 3})};
  std::string causal = ir, full = ir;
  causal.replace(causal.find("ATTR"), 4, "{causal}");
  full.replace(full.find("ATTR"), 4, "");
  // Scores (0, log 3) give weights (1/4, 3/4); query 0 sees key 0 only.
  expectNear(run(causal, args)[0], {1.0, 2.5});
  expectNear(run(full, args)[0], {2.5, 2.5});
}

// Half inputs, FP32 accumulation, one final rounding: 2048 + 1 + 1 + 1 is
// 2051 in FP32 and ties to the even 2052 in binary16 (accumulating in half
// would give 2048).
TEST_F(InterpTest, HalfMatmulAccumulatesInFP32) {
  const char *ir = R"(
    func.func @f(%a: tensor<1x4xT>, %b: tensor<4x1xT>) -> tensor<1x1xT> {
      %c = graph.matmul %a, %b : tensor<1x4xT>, tensor<4x1xT> -> tensor<1x1xT>
      return %c : tensor<1x1xT>
    })";
  auto typed = [&](const char *t, double big) {
    std::string s = ir;
    for (size_t p; (p = s.find("xT>")) != std::string::npos;)
      s.replace(p + 1, 1, t);
    ElemType et = std::string(t) == "f16" ? ElemType::F16 : ElemType::BF16;
    return run(s, {Tensor::floats({1, 4}, {big, 1, 1, 1}, et),
                   Tensor::floats({4, 1}, {1, 1, 1, 1}, et)})[0]
        .f[0];
  };
  EXPECT_EQ(typed("f16", 2048), 2052.0);
  // bf16 spacing at 256 is 2: 259 ties to the even 260.
  EXPECT_EQ(typed("bf16", 256), 260.0);
  std::string f32Ir = ir;
  for (size_t p; (p = f32Ir.find("xT>")) != std::string::npos;)
    f32Ir.replace(p + 1, 1, "f32");
  EXPECT_EQ(run(f32Ir, {f32({1, 4}, {2048, 1, 1, 1}), f32({4, 1}, {1, 1, 1, 1})})[0].f[0],
            2051.0);
}

// A float accumulator loses 2^24 + 1 + 1; FP64 numerics keeps it.
TEST_F(InterpTest, FP32AccumulatorVersusFP64) {
  const char *ir = R"(
    func.func @f(%a: tensor<1x3xf32>, %b: tensor<3x1xf32>) -> tensor<1x1xf32> {
      %c = graph.matmul %a, %b : tensor<1x3xf32>, tensor<3x1xf32> -> tensor<1x1xf32>
      return %c : tensor<1x1xf32>
    })";
  std::vector<Tensor> args = {f32({1, 3}, {16777216, 1, 1}),
                              f32({3, 1}, {1, 1, 1})};
  EXPECT_EQ(run(ir, args)[0].f[0], 16777216.0);
  InterpOptions fp64;
  fp64.numerics = Numerics::FP64;
  EXPECT_EQ(run(ir, args, fp64)[0].f[0], 16777218.0);
}

TEST_F(InterpTest, HalfElementwiseAndCastRound) {
  auto r = run(R"(
    func.func @f(%a: tensor<3xf32>) -> (tensor<3xf16>, tensor<3xf16>, tensor<3xbf16>) {
      %h = graph.cast %a : tensor<3xf32> -> tensor<3xf16>
      %s = graph.add %h, %h : tensor<3xf16>, tensor<3xf16> -> tensor<3xf16>
      %b = graph.cast %a : tensor<3xf32> -> tensor<3xbf16>
      return %h, %s, %b : tensor<3xf16>, tensor<3xf16>, tensor<3xbf16>
    })",
               {f32({3}, {65520, 2049, std::ldexp(1.0, -25)})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(std::isinf(r[0].f[0]));
  EXPECT_EQ(r[0].f[1], 2048);
  EXPECT_EQ(r[0].f[2], 0);
  EXPECT_EQ(r[1].f[1], 4096);
  EXPECT_EQ(r[2].f[1], 2048); // bf16 spacing at 2048 is 16
  EXPECT_EQ(r[2].f[0], 65536);
}

TEST_F(InterpTest, DropoutUsesTheSharedMask) {
  std::vector<double> ones(64, 1.0);
  InterpOptions o;
  o.seed = 42;
  o.step = 3;
  auto r = run(R"(
    func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
      %y = graph.dropout %x {p = 0.5, key = 9 : i64} : tensor<64xf32>
      return %y : tensor<64xf32>
    })",
               {f32({64}, ones)}, o);
  int kept = 0;
  for (int i = 0; i < 64; ++i) {
    bool keep = ampc::num::dropoutKeep(42, 3, 9, i, 0.5);
    EXPECT_EQ(r[0].f[i], keep ? 2.0 : 0.0) << i;
    kept += keep;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 64);
}

TEST_F(InterpTest, ReduceAndBroadcast) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x3xf32>) {
      %s = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
      %m = graph.reduce_mean %x {axes = array<i64: 0>, keepdim = true} : tensor<2x3xf32> -> tensor<1x3xf32>
      %mx = graph.reduce_max %x : tensor<2x3xf32> -> tensor<f32>
      %d = graph.sub %x, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
      return %s, %m, %mx, %d : tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x3xf32>
    })",
               {f32({2, 3}, {1, 2, 3, 4, 5, 9}), f32({3}, {1, 2, 3})});
  expectNear(r[0], {6, 18});
  expectNear(r[1], {2.5, 3.5, 6});
  expectNear(r[2], {9});
  expectNear(r[3], {0, 0, 0, 3, 3, 6});
}

TEST_F(InterpTest, UnknownOpIsAClearError) {
  ParserConfig config(context.get(), /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = "graph.frobnicate"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    })",
                                                             config);
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  Interpreter interp;
  EXPECT_TRUE(failed(interp.runFunction(
      module->lookupSymbol<func::FuncOp>("f"), {f32({2}, {1, 2})})));
  EXPECT_EQ(message,
            "the reference interpreter has no kernel for 'graph.frobnicate'");
}

//===----------------------------------------------------------------------===//
// Backward ops against central differences of the forward op (FP64).
//===----------------------------------------------------------------------===//

// Deterministic pseudo-random values in [-1, 1), away from kinks.
std::vector<double> noise(int64_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint64_t s = seed * 2654435761ull + 1;
  for (auto &x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = double(s >> 11) * 0x1p-53 * 2.0 - 1.0;
  }
  return v;
}

class VjpTest : public InterpTest {
protected:
  // @f(args) -> y in |fwd|; @f(args..., g) -> grads of args |wrt| in |bwd|.
  // Checks the grads equal d sum(y * g) / d arg by central differences.
  void check(const std::string &fwd, const std::string &bwd,
             std::vector<Tensor> args, std::vector<int> wrt,
             double tol = 1e-6) {
    InterpOptions o;
    o.numerics = Numerics::FP64;
    std::vector<Tensor> y = run(fwd, args, o);
    ASSERT_EQ(y.size(), 1u);
    Tensor g = Tensor::floats(y[0].shape, noise(y[0].size(), 99));
    std::vector<Tensor> bargs = args;
    bargs.push_back(g);
    std::vector<Tensor> grads = run(bwd, bargs, o);
    ASSERT_EQ(grads.size(), wrt.size());
    auto objective = [&](const std::vector<Tensor> &a) {
      Tensor out = run(fwd, a, o)[0];
      double s = 0;
      for (int64_t k = 0; k < out.size(); ++k)
        s += out.f[k] * g.f[k];
      return s;
    };
    const double eps = 1e-6;
    for (size_t w = 0; w < wrt.size(); ++w) {
      ASSERT_EQ(grads[w].shape, args[wrt[w]].shape) << "gradient " << w;
      for (int64_t k = 0; k < args[wrt[w]].size(); ++k) {
        std::vector<Tensor> plus = args, minus = args;
        plus[wrt[w]].f[k] += eps;
        minus[wrt[w]].f[k] -= eps;
        double numeric = (objective(plus) - objective(minus)) / (2 * eps);
        EXPECT_NEAR(grads[w].f[k], numeric, tol)
            << "gradient " << w << " element " << k;
      }
    }
  }
};

Tensor rnd(Shape s, uint32_t seed) {
  int64_t n = numElements(s);
  return Tensor::floats(std::move(s), noise(n, seed));
}

TEST_F(VjpTest, ReluAndGelu) {
  for (const char *approx : {"none", "tanh"}) {
    std::string a = approx;
    check(R"(func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
        %y = graph.gelu %x {approximate = ")" + a + R"("} : tensor<2x3xf32>
        return %y : tensor<2x3xf32> })",
          R"(func.func @f(%x: tensor<2x3xf32>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
        %d = "graph.gelu_backward"(%x, %g) {approximate = ")" + a + R"("} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
        return %d : tensor<2x3xf32> })",
          {rnd({2, 3}, 1)}, {0});
  }
  check(R"(func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %y = graph.relu %x : tensor<2x3xf32>
      return %y : tensor<2x3xf32> })",
        R"(func.func @f(%x: tensor<2x3xf32>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %d = "graph.relu_backward"(%x, %g) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      return %d : tensor<2x3xf32> })",
        {rnd({2, 3}, 2)}, {0});
}

TEST_F(VjpTest, Conv2d) {
  const char *attrs = "{stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, "
                      "dilation = array<i64: 1, 2>, groups = 2}";
  std::string a = attrs;
  check(R"(func.func @f(%x: tensor<2x4x5x5xf32>, %w: tensor<6x2x3x2xf32>) -> tensor<2x6x3x3xf32> {
      %y = graph.conv2d %x, %w )" + a + R"( : tensor<2x4x5x5xf32>, tensor<6x2x3x2xf32> -> tensor<2x6x3x3xf32>
      return %y : tensor<2x6x3x3xf32> })",
        R"(func.func @f(%x: tensor<2x4x5x5xf32>, %w: tensor<6x2x3x2xf32>, %g: tensor<2x6x3x3xf32>) -> (tensor<2x4x5x5xf32>, tensor<6x2x3x2xf32>) {
      %dx = "graph.conv2d_backward_input"(%g, %w) )" + a + R"( : (tensor<2x6x3x3xf32>, tensor<6x2x3x2xf32>) -> tensor<2x4x5x5xf32>
      %dw = "graph.conv2d_backward_weight"(%x, %g) )" + a + R"( : (tensor<2x4x5x5xf32>, tensor<2x6x3x3xf32>) -> tensor<6x2x3x2xf32>
      return %dx, %dw : tensor<2x4x5x5xf32>, tensor<6x2x3x2xf32> })",
        {rnd({2, 4, 5, 5}, 3), rnd({6, 2, 3, 2}, 4)}, {0, 1});
}

TEST_F(VjpTest, Pooling) {
  for (const char *op : {"max_pool2d", "avg_pool2d"}) {
    std::string o = op;
    std::string bwd = o == "max_pool2d"
                          ? R"("graph.max_pool2d_backward"(%x, %g))"
                          : R"("graph.avg_pool2d_backward"(%g))";
    const char *attrs = "{kernel_size = array<i64: 3, 2>, stride = array<i64: "
                        "2, 2>, padding = array<i64: 1, 1>}";
    std::string a = attrs;
    check(R"(func.func @f(%x: tensor<1x2x5x4xf32>) -> tensor<1x2x3x3xf32> {
        %y = graph.)" + o + " %x " + a + R"( : tensor<1x2x5x4xf32> -> tensor<1x2x3x3xf32>
        return %y : tensor<1x2x3x3xf32> })",
          R"(func.func @f(%x: tensor<1x2x5x4xf32>, %g: tensor<1x2x3x3xf32>) -> tensor<1x2x5x4xf32> {
        %d = )" + bwd + " " + a + " : " +
              (o == "max_pool2d"
                   ? "(tensor<1x2x5x4xf32>, tensor<1x2x3x3xf32>)"
                   : "(tensor<1x2x3x3xf32>)") +
              R"( -> tensor<1x2x5x4xf32>
        return %d : tensor<1x2x5x4xf32> })",
          {rnd({1, 2, 5, 4}, 5)}, {0});
  }
}

TEST_F(VjpTest, Norms) {
  check(R"(func.func @f(%x: tensor<3x5xf32>, %w: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
      %y = graph.layer_norm %x, %w, %b {eps = 1.0e-05} : tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32> -> tensor<3x5xf32>
      return %y : tensor<3x5xf32> })",
        R"(func.func @f(%x: tensor<3x5xf32>, %w: tensor<5xf32>, %b: tensor<5xf32>, %g: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>) {
      %dx, %dw, %db = "graph.layer_norm_backward"(%x, %w, %g) {eps = 1.0e-05} : (tensor<3x5xf32>, tensor<5xf32>, tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>)
      return %dx, %dw, %db : tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32> })",
        {rnd({3, 5}, 6), rnd({5}, 7), rnd({5}, 8)}, {0, 1, 2});
  check(R"(func.func @f(%x: tensor<3x5xf32>, %w: tensor<5xf32>) -> tensor<3x5xf32> {
      %y = graph.rms_norm %x, %w {eps = 1.0e-06} : tensor<3x5xf32>, tensor<5xf32> -> tensor<3x5xf32>
      return %y : tensor<3x5xf32> })",
        R"(func.func @f(%x: tensor<3x5xf32>, %w: tensor<5xf32>, %g: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>) {
      %dx, %dw = "graph.rms_norm_backward"(%x, %w, %g) {eps = 1.0e-06} : (tensor<3x5xf32>, tensor<5xf32>, tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>)
      return %dx, %dw : tensor<3x5xf32>, tensor<5xf32> })",
        {rnd({3, 5}, 9), rnd({5}, 10)}, {0, 1});
}

TEST_F(VjpTest, CrossEntropy) {
  check(R"(func.func @f(%z: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<f32> {
      %l = graph.cross_entropy %z, %y {ignore_index = 3 : i64, label_smoothing = 0.2} : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
      return %l : tensor<f32> })",
        R"(func.func @f(%z: tensor<4x5xf32>, %y: tensor<4xi64>, %g: tensor<f32>) -> tensor<4x5xf32> {
      %d = "graph.cross_entropy_backward"(%z, %y, %g) {ignore_index = 3 : i64, label_smoothing = 0.2} : (tensor<4x5xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x5xf32>
      return %d : tensor<4x5xf32> })",
        {rnd({4, 5}, 11), Tensor::ints({4}, {1, 3, 4, 0})}, {0});
}

TEST_F(VjpTest, AttentionCausal) {
  check(R"(func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x2xf32>) -> tensor<1x2x3x2xf32> {
      %o = graph.scaled_dot_product_attention %q, %k, %v {causal, scale = 0.7} : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x2xf32> -> tensor<1x2x3x2xf32>
      return %o : tensor<1x2x3x2xf32> })",
        R"(func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x2xf32>, %g: tensor<1x2x3x2xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x2xf32>) {
      %dq, %dk, %dv = "graph.scaled_dot_product_attention_backward"(%q, %k, %v, %g) {causal, scale = 0.7} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x2xf32>, tensor<1x2x3x2xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x2xf32>)
      return %dq, %dk, %dv : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x2xf32> })",
        {rnd({1, 2, 3, 4}, 12), rnd({1, 2, 5, 4}, 13), rnd({1, 2, 5, 2}, 14)},
        {0, 1, 2});
}

TEST_F(VjpTest, DataMovement) {
  check(R"(func.func @f(%t: tensor<4x3xf32>, %i: tensor<2x2xi64>) -> tensor<2x2x3xf32> {
      %e = graph.embedding %i, %t : tensor<2x2xi64>, tensor<4x3xf32> -> tensor<2x2x3xf32>
      return %e : tensor<2x2x3xf32> })",
        R"(func.func @f(%t: tensor<4x3xf32>, %i: tensor<2x2xi64>, %g: tensor<2x2x3xf32>) -> tensor<4x3xf32> {
      %d = "graph.embedding_backward"(%i, %g) : (tensor<2x2xi64>, tensor<2x2x3xf32>) -> tensor<4x3xf32>
      return %d : tensor<4x3xf32> })",
        {rnd({4, 3}, 15), Tensor::ints({2, 2}, {1, 3, 1, 0})}, {0});
  check(R"(func.func @f(%x: tensor<4x6xf32>) -> tensor<2x2xf32> {
      %y = graph.slice %x {starts = array<i64: 1, 1>, limits = array<i64: 4, 5>, strides = array<i64: 2, 3>} : tensor<4x6xf32> -> tensor<2x2xf32>
      return %y : tensor<2x2xf32> })",
        R"(func.func @f(%x: tensor<4x6xf32>, %g: tensor<2x2xf32>) -> tensor<4x6xf32> {
      %d = "graph.slice_backward"(%g) {starts = array<i64: 1, 1>, limits = array<i64: 4, 5>, strides = array<i64: 2, 3>} : (tensor<2x2xf32>) -> tensor<4x6xf32>
      return %d : tensor<4x6xf32> })",
        {rnd({4, 6}, 16)}, {0});
  check(R"(func.func @f(%x: tensor<3x4xf32>) -> tensor<3x1xf32> {
      %y = graph.reduce_max %x {axes = array<i64: -1>, keepdim = true} : tensor<3x4xf32> -> tensor<3x1xf32>
      return %y : tensor<3x1xf32> })",
        R"(func.func @f(%x: tensor<3x4xf32>, %g: tensor<3x1xf32>) -> tensor<3x4xf32> {
      %d = "graph.reduce_max_backward"(%x, %g) {axes = array<i64: -1>, keepdim = true} : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
      return %d : tensor<3x4xf32> })",
        {rnd({3, 4}, 17)}, {0});
}

TEST_F(InterpTest, ReduceMaxBackwardSharesTies) {
  auto r = run(R"(
    func.func @f(%x: tensor<4xf32>, %g: tensor<f32>) -> tensor<4xf32> {
      %d = "graph.reduce_max_backward"(%x, %g) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      return %d : tensor<4xf32>
    })",
               {f32({4}, {3, 1, 3, 2}), f32({}, {1})});
  expectNear(r[0], {0.5, 0, 0.5, 0});
}

TEST_F(InterpTest, BroadcastTo) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x1xf32>) -> tensor<3x2x2xf32> {
      %y = "graph.broadcast_to"(%x) : (tensor<2x1xf32>) -> tensor<3x2x2xf32>
      return %y : tensor<3x2x2xf32>
    })",
               {f32({2, 1}, {1, 2})});
  expectNear(r[0], {1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2});
}

TEST_F(InterpTest, GradcheckBindingsRespectConsumers) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    graph.model @m {
      %ids = graph.input "ids" : tensor<4x8xi64>
      %lab = graph.input "lab" : tensor<32xi32>
      %e = graph.param "e" init(#graph.zeros) : tensor<7x5xf32>
      %r = graph.reshape %ids : tensor<4x8xi64> -> tensor<32xi64>
      %h = graph.embedding %r, %e : tensor<32xi64>, tensor<7x5xf32> -> tensor<32x5xf32>
      %l = graph.cross_entropy %h, %lab : tensor<32x5xf32>, tensor<32xi32> -> tensor<f32>
      graph.output loss = %l : tensor<f32>
    })",
                                                             context.get());
  ASSERT_TRUE(module);
  auto model = ampc::getModel(*module);
  NamedTensors b = makeRandomBindings(model, 3);
  auto range = [](const Tensor &t) {
    return std::make_pair(*std::min_element(t.i.begin(), t.i.end()),
                          *std::max_element(t.i.begin(), t.i.end()));
  };
  // Ids index the 7-row table (through the reshape), labels the 5 classes.
  EXPECT_EQ(range(b.at("ids")), std::make_pair(int64_t(0), int64_t(6)));
  EXPECT_EQ(range(b.at("lab")), std::make_pair(int64_t(0), int64_t(4)));
  // Zero-initialised parameters get noise; the same seed gives the same values.
  const Tensor &e = b.at("e");
  EXPECT_GT(*std::max_element(e.f.begin(), e.f.end()), 0.1);
  EXPECT_EQ(makeRandomBindings(model, 3).at("e").f, e.f);
  EXPECT_NE(makeRandomBindings(model, 4).at("e").f, e.f);
  // The forward runs on them.
  InterpOptions o;
  o.numerics = Numerics::FP64;
  Interpreter interp(o);
  auto outs = interp.runModel(model, b);
  ASSERT_TRUE(succeeded(outs));
  EXPECT_TRUE(std::isfinite(outs->at("loss").f[0]));
}

} // namespace

// adaptive_avg_pool2d, upsample_nearest2d and their backward ops against
// PyTorch's float32 numbers (test/unit/torch/resample_expected.py; the same
// inputs as CpuResampleTest): with typed numerics, bit for bit.
namespace resample {
#include "test/unit/torch/ResampleExpected.inc"
} // namespace resample

TEST_F(InterpTest, ResampleMatchesPyTorch) {
  auto ramp = [](int64_t n, int mul, int mod, int off, double div) {
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i)
      v.push_back(double((i * mul) % mod - off) / div);
    return v;
  };
  auto floats = [](std::vector<double> v) {
    for (double &d : v)
      d = double(float(d));
    return v;
  };
  auto r = run(R"(
    func.func @f(%x: tensor<1x2x5x7xf32>, %g: tensor<1x2x3x4xf32>, %u: tensor<1x1x4x3xf32>, %gu: tensor<1x1x5x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x5x7xf32>, tensor<1x1x5x4xf32>, tensor<1x1x4x3xf32>) {
      %y = graph.adaptive_avg_pool2d %x {output_size = array<i64: 3, 4>} : tensor<1x2x5x7xf32> -> tensor<1x2x3x4xf32>
      %dx = "graph.adaptive_avg_pool2d_backward"(%g) : (tensor<1x2x3x4xf32>) -> tensor<1x2x5x7xf32>
      %v = graph.upsample_nearest2d %u {scales_h = 1.4, scales_w = 1.6} : tensor<1x1x4x3xf32> -> tensor<1x1x5x4xf32>
      %du = "graph.upsample_nearest2d_backward"(%gu) {scales_h = 1.4, scales_w = 1.6} : (tensor<1x1x5x4xf32>) -> tensor<1x1x4x3xf32>
      return %y, %dx, %v, %du : tensor<1x2x3x4xf32>, tensor<1x2x5x7xf32>, tensor<1x1x5x4xf32>, tensor<1x1x4x3xf32>
    })",
               {f32({1, 2, 5, 7}, ramp(70, 37, 23, 11, 8.0)),
                f32({1, 2, 3, 4}, ramp(24, 13, 17, 8, 4.0)),
                f32({1, 1, 4, 3}, ramp(12, 37, 23, 11, 8.0)),
                f32({1, 1, 5, 4}, ramp(20, 13, 17, 8, 4.0))});
  ASSERT_EQ(r.size(), 4u);
  expectNear(r[0], floats(resample::adaptiveY), 0);
  expectNear(r[1], floats(resample::adaptiveDx), 0);
  expectNear(r[2], floats(resample::floatY), 0);
  expectNear(r[3], floats(resample::floatDx), 0);
}

// upsample_bilinear2d and its backward on the values CpuResampleTest works
// out by hand (exact fractions; all dyadic): 2x2 -> 4x4 by scale 2, and
// align_corners 2x2 -> 3x3. Typed numerics compute in float, as the kernels.
TEST_F(InterpTest, BilinearUpsampleByHand) {
  auto r = run(R"(
    func.func @f(%x: tensor<1x1x2x2xf32>, %g: tensor<1x1x4x4xf32>, %g3: tensor<1x1x3x3xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) {
      %y = graph.upsample_bilinear2d %x {scales_h = 2.0, scales_w = 2.0} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
      %dx = "graph.upsample_bilinear2d_backward"(%g) {scales_h = 2.0, scales_w = 2.0} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
      %y3 = graph.upsample_bilinear2d %x {size = array<i64: 3, 3>, align_corners = true} : tensor<1x1x2x2xf32> -> tensor<1x1x3x3xf32>
      %dx3 = "graph.upsample_bilinear2d_backward"(%g3) {size = array<i64: 3, 3>, align_corners = true} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
      return %y, %dx, %y3, %dx3 : tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>
    })",
               {f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                f32({1, 1, 4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                   13, 14, 15}),
                f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_EQ(r.size(), 4u);
  expectNear(r[0],
             {1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5,
              3.0, 3.25, 3.75, 4.0},
             0);
  expectNear(r[1], {12.5, 19.5, 40.5, 47.5}, 0);
  expectNear(r[2], {1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0}, 0);
  expectNear(r[3], {3.0, 6.0, 12.0, 15.0}, 0);
}

// embedding_backward with init: each row's FP32 sum plus init's row (a row
// no id names is init + 0, so -0.0 becomes +0.0), as the graph.add of the
// plain result and the widened init gave.
TEST_F(InterpTest, EmbeddingBackwardWithInitAddsItsRows) {
  auto r = run(R"(
    func.func @f(%i: tensor<3xi64>, %g: tensor<3x1xf32>, %x: tensor<4x1xbf16>) -> tensor<4x1xf32> {
      %d = graph.embedding_backward %i, %g, %x : tensor<3xi64>, tensor<3x1xf32>, tensor<4x1xbf16> -> tensor<4x1xf32>
      return %d : tensor<4x1xf32>
    })",
               {Tensor::ints({3}, {1, 3, 1}),
                Tensor::floats({3, 1}, {0.5, 2, 0.25}),
                Tensor::floats({4, 1}, {-0.0, 1, 3, 0.125}, ElemType::BF16)});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].f, (std::vector<double>{0, 1.75, 3, 2.125}));
  EXPECT_FALSE(std::signbit(r[0].f[0]));
}

// linear_gelu and matmul_gelu_backward round the GELU (or its gradient) of
// the unrounded GEMM once. bf16, z = 1 + 2^-9: the preactivation rounds to
// 1, gelu(z) = 0.84331 to 0.84375, where gelu of the rounded 1 would give
// 0.83984375. Backward at z = 1 with G = 1 + 3 * 2^-9: 1.08931 rounds to
// 1.0859375, where G rounded first (1.0078125) would give 1.09375.
TEST_F(InterpTest, GemmGeluRoundsOnce) {
  auto r = run(R"(
    func.func @f(%x: tensor<1x2xbf16>, %w: tensor<1x2xbf16>, %a: tensor<1x2xbf16>, %z: tensor<1x1xbf16>) -> (tensor<1x1xbf16>, tensor<1x1xbf16>, tensor<1x1xbf16>) {
      %h, %pre = "graph.linear_gelu"(%x, %w) : (tensor<1x2xbf16>, tensor<1x2xbf16>) -> (tensor<1x1xbf16>, tensor<1x1xbf16>)
      %d = "graph.matmul_gelu_backward"(%a, %w, %z) {rhs_transposed} : (tensor<1x2xbf16>, tensor<1x2xbf16>, tensor<1x1xbf16>) -> tensor<1x1xbf16>
      return %h, %pre, %d : tensor<1x1xbf16>, tensor<1x1xbf16>, tensor<1x1xbf16>
    })",
               {Tensor::floats({1, 2}, {1, 0x1p-9}, ElemType::BF16),
                Tensor::floats({1, 2}, {1, 1}, ElemType::BF16),
                Tensor::floats({1, 2}, {1, 3 * 0x1p-9}, ElemType::BF16),
                Tensor::floats({1, 1}, {1}, ElemType::BF16)});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].f, (std::vector<double>{0.84375}));
  EXPECT_EQ(r[1].f, (std::vector<double>{1}));
  EXPECT_EQ(r[2].f, (std::vector<double>{1.0859375}));
}

// matmul_bias_grad is the GEMM plus the reduce_sum of its lhs over K: FP32
// accumulation rounded once (bf16: 256 + 1 + 1 + 1 = 259 ties to 260), the
// same bits as the reduce_sum it replaces, for either lhs layout.
TEST_F(InterpTest, MatmulBiasGradMatchesMatmulAndReduceSum) {
  auto r = run(R"(
    func.func @f(%g: tensor<4x2xbf16>, %x: tensor<4x1xbf16>) -> (tensor<2x1xbf16>, tensor<2xbf16>, tensor<2x1xbf16>, tensor<2xbf16>) {
      %dw, %db = "graph.matmul_bias_grad"(%g, %x) {lhs_transposed} : (tensor<4x2xbf16>, tensor<4x1xbf16>) -> (tensor<2x1xbf16>, tensor<2xbf16>)
      %w = graph.matmul %g, %x {lhs_transposed} : tensor<4x2xbf16>, tensor<4x1xbf16> -> tensor<2x1xbf16>
      %b = graph.reduce_sum %g {axes = array<i64: 0>} : tensor<4x2xbf16> -> tensor<2xbf16>
      return %dw, %db, %w, %b : tensor<2x1xbf16>, tensor<2xbf16>, tensor<2x1xbf16>, tensor<2xbf16>
    })",
               {Tensor::floats({4, 2}, {256, 1, 1, 2, 1, 3, 1, 4}, ElemType::BF16),
                Tensor::floats({4, 1}, {1, 1, 1, 1}, ElemType::BF16)});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].f, (std::vector<double>{260, 10}));
  EXPECT_EQ(r[1].f, (std::vector<double>{260, 10}));
  EXPECT_EQ(r[0].f, r[2].f);
  EXPECT_EQ(r[1].f, r[3].f);
  // lhs [M, K] untransposed: the sum runs along each row.
  auto u = run(R"(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x1xf32>) -> (tensor<2x1xf32>, tensor<2xf32>) {
      %c, %s = "graph.matmul_bias_grad"(%a, %b) : (tensor<2x3xf32>, tensor<3x1xf32>) -> (tensor<2x1xf32>, tensor<2xf32>)
      return %c, %s : tensor<2x1xf32>, tensor<2xf32>
    })",
               {Tensor::floats({2, 3}, {1, 2, 3, 4, 5, 9}),
                Tensor::floats({3, 1}, {1, 0, 2})});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].f, (std::vector<double>{7, 22}));
  EXPECT_EQ(u[1].f, (std::vector<double>{6, 18}));
}
