//===- InterpCrossEntropyGradTest.cpp - cross_entropy_with_grad = the pair ===//
//
// The reference interpreter's cross_entropy_with_grad gives cross_entropy's
// loss and cross_entropy_backward's dlogits exactly, in typed numerics and
// in FP64, with an ignored label and label smoothing.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/interp/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace ampc::interp;

namespace {

constexpr const char *kIr = R"mlir(
func.func @pair(%z: tensor<4x6xbf16>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x6xbf16>) {
  %l = graph.cross_entropy %z, %y {ignore_index = 2 : i64, label_smoothing = 0.1} : tensor<4x6xbf16>, tensor<4xi64> -> tensor<f32>
  %d = graph.cross_entropy_backward %z, %y, %g {ignore_index = 2 : i64, label_smoothing = 0.1} : tensor<4x6xbf16>, tensor<4xi64>, tensor<f32> -> tensor<4x6xbf16>
  func.return %l, %d : tensor<f32>, tensor<4x6xbf16>
}
func.func @fused(%z: tensor<4x6xbf16>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x6xbf16>) {
  %l, %d = graph.cross_entropy_with_grad %z, %y, %g {ignore_index = 2 : i64, label_smoothing = 0.1} : tensor<4x6xbf16>, tensor<4xi64>, tensor<f32> -> tensor<f32>, tensor<4x6xbf16>
  func.return %l, %d : tensor<f32>, tensor<4x6xbf16>
}
)mlir";

TEST(InterpCrossEntropyGrad, SameAsTheTwoOps) {
  auto context = ampc::createContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kIr, context.get());
  ASSERT_TRUE(module);
  std::vector<double> z(24);
  for (size_t i = 0; i < z.size(); ++i) // exact in bf16
    z[i] = double(int64_t((i * 5 + 3) % 16) - 8) / 4.0;
  std::vector<Tensor> args{Tensor::floats({4, 6}, z, ElemType::BF16),
                           Tensor::ints({4}, {0, 2, 5, 3}),
                           Tensor::scalar(128.0)};
  for (Numerics n : {Numerics::Typed, Numerics::FP64}) {
    Interpreter interp(InterpOptions{n});
    auto want =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("pair"), args);
    auto got =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("fused"), args);
    ASSERT_TRUE(succeeded(want) && succeeded(got));
    ASSERT_EQ(got->size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      ASSERT_EQ((*got)[r].shape, (*want)[r].shape);
      for (size_t i = 0; i < (*got)[r].f.size(); ++i)
        EXPECT_EQ((*got)[r].f[i], (*want)[r].f[i])
            << "result " << r << " [" << i << "]";
    }
    // Row 1's label is ignored: zero gradient; the others are not zero.
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ((*got)[1].f[size_t(6 + j)], 0.0);
    EXPECT_NE((*got)[1].f[0], 0.0);
    EXPECT_GT((*got)[0].f[0], 0.0);
  }
}

} // namespace
