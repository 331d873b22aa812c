//===- InterpAbsorbCastsTest.cpp - Half results of FP32-computing ops -----===//
//
// graph-absorb-casts turns `op -> f32, cast -> bf16` into `op -> bf16`. The
// interpreter must give the same bits: such an op's half result is rounded
// from FP32 (as its kernels and the removed cast did), not from double in
// one step, which differs where the f32 value lands on a bf16 tie.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/interp/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace ampc::interp;

namespace {

std::vector<Tensor> runF(MLIRContext *context, const std::string &ir,
                         std::vector<Tensor> args) {
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, config);
  EXPECT_TRUE(module) << ir;
  if (!module)
    return {};
  Interpreter interp{InterpOptions{}};
  auto r = interp.runFunction(module->lookupSymbol<func::FuncOp>("f"), args);
  EXPECT_TRUE(succeeded(r)) << ir;
  return succeeded(r) ? *r : std::vector<Tensor>{};
}

// Row [1, -1]: mean 0, variance 1, xhat_0 = 1 / sqrt(1 + eps). With the
// bias b chosen so y_0 = 1 + 2^-8 + 2^-27 (in double, up to float(b)'s
// rounding, 2^-31): one step to bf16 rounds up to 1 + 2^-7, through f32
// it is the tie 1 + 2^-8, which rounds to even: 1.
TEST(InterpAbsorbCasts, LayerNormHalfResultRoundsThroughFP32) {
  auto context = ampc::createContext();
  double xhat = 1.0 / std::sqrt(1.0 + 1e-5);
  double b = double(float(1.0 + 0x1p-8 + 0x1p-27 - xhat));
  std::vector<Tensor> args = {Tensor::floats({1, 2}, {1.0, -1.0}),
                              Tensor::floats({2}, {1.0, 1.0}),
                              Tensor::floats({2}, {b, b})};
  auto cast = runF(context.get(), R"(
    func.func @f(%x: tensor<1x2xf32>, %w: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<1x2xbf16> {
      %y = graph.layer_norm %x, %w, %b {eps = 1.0e-05} : tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2xf32>
      %h = graph.cast %y : tensor<1x2xf32> -> tensor<1x2xbf16>
      return %h : tensor<1x2xbf16>
    })", args);
  auto absorbed = runF(context.get(), R"(
    func.func @f(%x: tensor<1x2xf32>, %w: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<1x2xbf16> {
      %y = graph.layer_norm %x, %w, %b {eps = 1.0e-05} : tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2xbf16>
      return %y : tensor<1x2xbf16>
    })", args);
  ASSERT_EQ(cast.size(), 1u);
  ASSERT_EQ(absorbed.size(), 1u);
  EXPECT_EQ(cast[0].f[0], 1.0);
  EXPECT_EQ(absorbed[0].f, cast[0].f);
}

// cross_entropy_backward on bf16 logits writing bf16 against the f32 op
// between a widening and a narrowing cast: the same bits everywhere.
TEST(InterpAbsorbCasts, CrossEntropyBackwardHalfInOut) {
  auto context = ampc::createContext();
  std::vector<double> z;
  for (int i = 0; i < 4 * 37; ++i) // bf16 values (8 significant bits)
    z.push_back(double(int((i * 7919) % 211) - 105) / 32.0);
  std::vector<Tensor> args = {
      Tensor::floats({4, 37}, z, ElemType::BF16),
      Tensor::ints({4}, {3, 36, -100, 0}), Tensor::scalar(65536.0)};
  auto cast = runF(context.get(), R"(
    func.func @f(%z: tensor<4x37xbf16>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x37xbf16>) {
      %z32 = graph.cast %z : tensor<4x37xbf16> -> tensor<4x37xf32>
      %l = graph.cross_entropy %z32, %y {label_smoothing = 0.1} : tensor<4x37xf32>, tensor<4xi64> -> tensor<f32>
      %d = "graph.cross_entropy_backward"(%z32, %y, %g) {label_smoothing = 0.1} : (tensor<4x37xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x37xf32>
      %h = graph.cast %d : tensor<4x37xf32> -> tensor<4x37xbf16>
      return %l, %h : tensor<f32>, tensor<4x37xbf16>
    })", args);
  auto absorbed = runF(context.get(), R"(
    func.func @f(%z: tensor<4x37xbf16>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x37xbf16>) {
      %l = graph.cross_entropy %z, %y {label_smoothing = 0.1} : tensor<4x37xbf16>, tensor<4xi64> -> tensor<f32>
      %d = "graph.cross_entropy_backward"(%z, %y, %g) {label_smoothing = 0.1} : (tensor<4x37xbf16>, tensor<4xi64>, tensor<f32>) -> tensor<4x37xbf16>
      return %l, %d : tensor<f32>, tensor<4x37xbf16>
    })", args);
  ASSERT_EQ(cast.size(), 2u);
  ASSERT_EQ(absorbed.size(), 2u);
  EXPECT_EQ(absorbed[0].f, cast[0].f);
  EXPECT_EQ(absorbed[1].f, cast[1].f);
}

} // namespace
