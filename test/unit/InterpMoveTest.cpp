//===- InterpMoveTest.cpp - Transpose flags and slice perm in the interpreter -===//
//
// The reference interpreter honours matmul/batch_matmul's lhs_transposed /
// rhs_transposed and slice/slice_backward's and concat's perm: exact values
// worked out by hand, and the flagged/permuted forms against the
// spelled-out transposes (and concat with perm against the sum of
// slice_backward results it replaces).
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

class InterpMoveTest : public ::testing::Test {
protected:
  std::unique_ptr<MLIRContext> context = ampc::createContext();

  std::vector<Tensor> run(const std::string &ir, std::vector<Tensor> args) {
    ParserConfig config(context.get(), /*verifyAfterParse=*/false);
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, config);
    EXPECT_TRUE(module) << ir;
    if (!module)
      return {};
    auto f = module->lookupSymbol<func::FuncOp>("f");
    Interpreter interp;
    FailureOr<std::vector<Tensor>> r = interp.runFunction(f, args);
    EXPECT_TRUE(succeeded(r)) << ir;
    return succeeded(r) ? *r : std::vector<Tensor>{};
  }
};

// a = [[1, 2], [3, 4], [5, 6]] (3x2), b = [[1, 0, 2], [0, 1, 3]] (2x3).
TEST_F(InterpMoveTest, MatmulFlags) {
  Tensor a = Tensor::floats({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::floats({2, 3}, {1, 0, 2, 0, 1, 3});
  // a^T b^T: [2x3] x [3x2] = [[1*1+3*0+5*2, 1*0+3*1+5*3], [2*1+4*0+6*2,
  // 2*0+4*1+6*3]] = [[11, 18], [14, 22]].
  auto both = run(R"(
    func.func @f(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
      %c = graph.matmul %a, %b {lhs_transposed, rhs_transposed} : tensor<3x2xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    })",
                  {a, b});
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].f, (std::vector<double>{11, 18, 14, 22}));
  // a^T a: [2x3] x [3x2] = [[35, 44], [44, 56]].
  auto lhs = run(R"(
    func.func @f(%a: tensor<3x2xf32>) -> tensor<2x2xf32> {
      %c = graph.matmul %a, %a {lhs_transposed} : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    })",
                 {a});
  EXPECT_EQ(lhs[0].f, (std::vector<double>{35, 44, 44, 56}));
  // b b^T: [2x3] x [3x2] = [[5, 6], [6, 10]].
  auto rhs = run(R"(
    func.func @f(%b: tensor<2x3xf32>) -> tensor<2x2xf32> {
      %c = graph.batch_matmul %b, %b {rhs_transposed} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    })",
                 {b});
  EXPECT_EQ(rhs[0].f, (std::vector<double>{5, 6, 6, 10}));
}

// batch_matmul with both flags against the spelled-out transposes.
TEST_F(InterpMoveTest, BatchMatmulFlagsMatchTransposes) {
  std::vector<double> av, bv;
  for (int i = 0; i < 2 * 4 * 3; ++i)
    av.push_back((i * 7) % 11 - 5);
  for (int i = 0; i < 2 * 5 * 4; ++i)
    bv.push_back((i * 5) % 9 - 4);
  Tensor a = Tensor::floats({2, 4, 3}, av), b = Tensor::floats({2, 5, 4}, bv);
  auto r = run(R"(
    func.func @f(%a: tensor<2x4x3xf32>, %b: tensor<2x5x4xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
      %c = graph.batch_matmul %a, %b {lhs_transposed, rhs_transposed} : tensor<2x4x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
      %at = graph.transpose %a {perm = array<i64: 0, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
      %bt = graph.transpose %b {perm = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
      %d = graph.batch_matmul %at, %bt : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
      return %c, %d : tensor<2x3x5xf32>, tensor<2x3x5xf32>
    })",
               {a, b});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].f, r[1].f);
}

// x = 0..23 as [2, 3, 4]; slice [:, 1:3, 0:4:2] is [2, 2, 2]; perm (2, 0, 1)
// makes result (i, j, k) = slice (j, k, i) = x[j, 1 + k, 2 * i].
TEST_F(InterpMoveTest, SliceAndSliceBackwardPerm) {
  std::vector<double> xv;
  for (int i = 0; i < 24; ++i)
    xv.push_back(i);
  auto r = run(R"(
    func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<2x2x2xf32>, tensor<2x3x4xf32>) {
      %y = "graph.slice"(%x) {starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 2>, perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
      %dx = "graph.slice_backward"(%y) {starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 2>, perm = array<i64: 2, 0, 1>} : (tensor<2x2x2xf32>) -> tensor<2x3x4xf32>
      return %y, %dx : tensor<2x2x2xf32>, tensor<2x3x4xf32>
    })",
               {Tensor::floats({2, 3, 4}, xv)});
  ASSERT_EQ(r.size(), 2u);
  // i = 0: x[0,1,0], x[0,2,0], x[1,1,0], x[1,2,0]; i = 1: the same at +2.
  EXPECT_EQ(r[0].f, (std::vector<double>{4, 8, 16, 20, 6, 10, 18, 22}));
  // slice_backward puts every element back where it came from.
  std::vector<double> dx(24, 0.0);
  for (int i : {4, 8, 16, 20, 6, 10, 18, 22})
    dx[size_t(i)] = i;
  EXPECT_EQ(r[1].f, dx);
}

// a = 0..5 as [2, 3], b = 6..7 as [2, 1]; perm (1, 0), axis 0: the rows of
// a^T then b^T.
TEST_F(InterpMoveTest, ConcatPerm) {
  auto r = run(R"(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<4x2xf32> {
      %y = "graph.concat"(%a, %b) {axis = 0 : i64, perm = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<4x2xf32>
      return %y : tensor<4x2xf32>
    })",
               {Tensor::floats({2, 3}, {0, 1, 2, 3, 4, 5}),
                Tensor::floats({2, 1}, {6, 7})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].f, (std::vector<double>{0, 3, 1, 4, 2, 5, 6, 7}));
}

// The q/k/v gradients joined: g_i [B=1, H=2, T=2, D=2] as slices
// [:, :, 2i:2i+2, :] of dx [1, 2, 6, 2] with perm (0, 2, 1, 3). The sum of
// the three slice_backward results and the concat with perm are the same.
TEST_F(InterpMoveTest, ConcatPermIsSumOfSliceBackwards) {
  std::vector<Tensor> g;
  for (int i = 0; i < 3; ++i) {
    std::vector<double> v;
    for (int k = 0; k < 8; ++k)
      v.push_back(10 * (i + 1) + k);
    g.push_back(Tensor::floats({1, 2, 2, 2}, v));
  }
  auto r = run(R"(
    func.func @f(%q: tensor<1x2x2x2xf32>, %k: tensor<1x2x2x2xf32>, %v: tensor<1x2x2x2xf32>) -> (tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>) {
      %dq = "graph.slice_backward"(%q) {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 1, 2, 2, 2>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x6x2xf32>
      %dk = "graph.slice_backward"(%k) {starts = array<i64: 0, 0, 2, 0>, limits = array<i64: 1, 2, 4, 2>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x6x2xf32>
      %dv = "graph.slice_backward"(%v) {starts = array<i64: 0, 0, 4, 0>, limits = array<i64: 1, 2, 6, 2>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x6x2xf32>
      %s0 = "graph.add"(%dv, %dq) : (tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>) -> tensor<1x2x6x2xf32>
      %s = "graph.add"(%s0, %dk) : (tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>) -> tensor<1x2x6x2xf32>
      %c = "graph.concat"(%q, %k, %v) {axis = 2 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x6x2xf32>
      return %s, %c : tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>
    })",
               g);
  ASSERT_EQ(r.size(), 2u);
  // dx[0, t, 2i + h, d] = g_i[0, h, t, d] = 10 (i + 1) + 4 h + 2 t + d.
  std::vector<double> want;
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 3; ++i)
      for (int h = 0; h < 2; ++h)
        for (int d = 0; d < 2; ++d)
          want.push_back(10 * (i + 1) + 4 * h + 2 * t + d);
  EXPECT_EQ(r[0].f, want);
  EXPECT_EQ(r[1].f, want);
}

} // namespace
