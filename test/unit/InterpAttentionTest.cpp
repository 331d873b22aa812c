//===- InterpAttentionTest.cpp - Interpreter attention against PyTorch ----===//
//
// The reference interpreter's scaled_dot_product_attention (grouped-query
// heads, integer keep-mask, additive float mask with causal) and its
// backward in FP64 against PyTorch 2.15's float64 numbers committed by
// test/unit/torch/sdpa_expected.py, on the script's closed-form inputs.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/interp/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test/unit/torch/SdpaExpected.inc"

using namespace mlir;
using namespace ampc::interp;

namespace {

Tensor filled(Shape shape, double a, double b, double (*fn)(double)) {
  std::vector<double> v(size_t(numElements(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = fn(a * double(i) + b);
  return Tensor::floats(std::move(shape), std::move(v));
}

template <size_t N>
void expectNear(const Tensor &t, const double (&want)[N], const char *what) {
  ASSERT_EQ(t.f.size(), N) << what;
  for (size_t i = 0; i < N; ++i)
    EXPECT_NEAR(t.f[i], want[i], 1e-12) << what << " [" << i << "]";
}

// Runs @f of |ir| in FP64 on |args|.
std::vector<Tensor> run(MLIRContext *context, const std::string &ir,
                        std::vector<Tensor> args) {
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, config);
  EXPECT_TRUE(module) << ir;
  if (!module)
    return {};
  Interpreter interp(InterpOptions{Numerics::FP64});
  FailureOr<std::vector<Tensor>> r =
      interp.runFunction(module->lookupSymbol<func::FuncOp>("f"), args);
  EXPECT_TRUE(succeeded(r)) << ir;
  return succeeded(r) ? *r : std::vector<Tensor>{};
}

TEST(InterpAttentionTorch, GroupedQueryKeepMask) {
  auto context = ampc::createContext();
  std::vector<int64_t> keep;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j)
        keep.push_back((b + i + 2 * j) % 3 != 0 && !(b == 1 && i == 1));
  std::vector<Tensor> args = {
      filled({2, 4, 3, 4}, 0.7, 0.1, std::sin),
      filled({2, 2, 5, 4}, 0.45, 0.3, std::cos),
      filled({2, 2, 5, 2}, 0.31, -0.2, std::sin),
      filled({2, 4, 3, 2}, 0.23, 0.5, std::cos),
      Tensor::ints({2, 1, 3, 5}, keep)};
  auto r = run(context.get(), R"(
    func.func @f(%q: tensor<2x4x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x2xf32>, %g: tensor<2x4x3x2xf32>, %m: tensor<2x1x3x5xi64>) -> (tensor<2x4x3x2xf32>, tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>) {
      %o = graph.scaled_dot_product_attention %q, %k, %v mask %m : tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>, tensor<2x1x3x5xi64> -> tensor<2x4x3x2xf32>
      %dq, %dk, %dv = "graph.scaled_dot_product_attention_backward"(%q, %k, %v, %g, %m) : (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>, tensor<2x4x3x2xf32>, tensor<2x1x3x5xi64>) -> (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>)
      return %o, %dq, %dk, %dv : tensor<2x4x3x2xf32>, tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>
    })",
                   args);
  ASSERT_EQ(r.size(), 4u);
  expectNear(r[0], kKeep_o, "o");
  expectNear(r[1], kKeep_dq, "dq");
  expectNear(r[2], kKeep_dk, "dk");
  expectNear(r[3], kKeep_dv, "dv");
}

TEST(InterpAttentionTorch, GroupedQueryAdditiveMaskCausal) {
  auto context = ampc::createContext();
  std::vector<double> add;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      add.push_back((i + j) % 4 != 3 ? 0.1 * (i - j) : -INFINITY);
  std::vector<Tensor> args = {
      filled({1, 6, 4, 3}, 0.7, 0.1, std::sin),
      filled({1, 2, 4, 3}, 0.45, 0.3, std::cos),
      filled({1, 2, 4, 3}, 0.31, -0.2, std::sin),
      filled({1, 6, 4, 3}, 0.23, 0.5, std::cos), Tensor::floats({4, 4}, add)};
  auto r = run(context.get(), R"(
    func.func @f(%q: tensor<1x6x4x3xf32>, %k: tensor<1x2x4x3xf32>, %v: tensor<1x2x4x3xf32>, %g: tensor<1x6x4x3xf32>, %m: tensor<4x4xf32>) -> (tensor<1x6x4x3xf32>, tensor<1x6x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>) {
      %o = graph.scaled_dot_product_attention %q, %k, %v mask %m {causal, scale = 0.6} : tensor<1x6x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<4x4xf32> -> tensor<1x6x4x3xf32>
      %dq, %dk, %dv = "graph.scaled_dot_product_attention_backward"(%q, %k, %v, %g, %m) {causal, scale = 0.6} : (tensor<1x6x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x6x4x3xf32>, tensor<4x4xf32>) -> (tensor<1x6x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>)
      return %o, %dq, %dk, %dv : tensor<1x6x4x3xf32>, tensor<1x6x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>
    })",
                   args);
  ASSERT_EQ(r.size(), 4u);
  expectNear(r[0], kAdditive_o, "o");
  expectNear(r[1], kAdditive_dq, "dq");
  expectNear(r[2], kAdditive_dk, "dk");
  expectNear(r[3], kAdditive_dv, "dv");
}

} // namespace
