//===- InterpPackedAttentionTest.cpp - packed_attention = the unfused graph ===//
//
// The reference interpreter's packed_attention and its backward give the
// same numbers as the graph graph-fuse-packed-attention replaces (slices,
// reshapes, transposes around scaled_dot_product_attention, and the concat
// of dq, dk, dv), in typed bf16 numerics, exactly.
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

// B = 2, T = 3, H = 2, D = 4, E = 8, bf16; causal.
constexpr const char *kIr = R"mlir(
func.func @unfused(%qkv: tensor<2x3x24xbf16>, %g: tensor<2x3x8xbf16>) -> (tensor<2x3x8xbf16>, tensor<2x3x24xbf16>) {
  %q0 = graph.slice %qkv {limits = array<i64: 2, 3, 8>, starts = array<i64: 0, 0, 0>} : tensor<2x3x24xbf16> -> tensor<2x3x8xbf16>
  %q1 = graph.reshape %q0 : tensor<2x3x8xbf16> -> tensor<2x3x2x4xbf16>
  %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x4xbf16> -> tensor<2x2x3x4xbf16>
  %k0 = graph.slice %qkv {limits = array<i64: 2, 3, 16>, starts = array<i64: 0, 0, 8>} : tensor<2x3x24xbf16> -> tensor<2x3x8xbf16>
  %k1 = graph.reshape %k0 : tensor<2x3x8xbf16> -> tensor<2x3x2x4xbf16>
  %k = graph.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x4xbf16> -> tensor<2x2x3x4xbf16>
  %v0 = graph.slice %qkv {limits = array<i64: 2, 3, 24>, starts = array<i64: 0, 0, 16>} : tensor<2x3x24xbf16> -> tensor<2x3x8xbf16>
  %v1 = graph.reshape %v0 : tensor<2x3x8xbf16> -> tensor<2x3x2x4xbf16>
  %v = graph.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x4xbf16> -> tensor<2x2x3x4xbf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v {causal} : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16> -> tensor<2x2x3x4xbf16>
  %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x4xbf16> -> tensor<2x3x2x4xbf16>
  %o = graph.reshape %a1 : tensor<2x3x2x4xbf16> -> tensor<2x3x8xbf16>
  %g1 = graph.reshape %g : tensor<2x3x8xbf16> -> tensor<2x3x2x4xbf16>
  %gh = graph.transpose %g1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x4xbf16> -> tensor<2x2x3x4xbf16>
  %dq, %dk, %dv = graph.scaled_dot_product_attention_backward %q, %k, %v, %gh {causal} : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16> -> tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>
  %dq1 = graph.transpose %dq {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x4xbf16> -> tensor<2x3x2x4xbf16>
  %dk1 = graph.transpose %dk {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x4xbf16> -> tensor<2x3x2x4xbf16>
  %dv1 = graph.transpose %dv {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x4xbf16> -> tensor<2x3x2x4xbf16>
  %dq2 = graph.reshape %dq1 : tensor<2x3x2x4xbf16> -> tensor<2x3x8xbf16>
  %dk2 = graph.reshape %dk1 : tensor<2x3x2x4xbf16> -> tensor<2x3x8xbf16>
  %dv2 = graph.reshape %dv1 : tensor<2x3x2x4xbf16> -> tensor<2x3x8xbf16>
  %d = graph.concat %dq2, %dk2, %dv2 {axis = 2 : i64} : tensor<2x3x8xbf16>, tensor<2x3x8xbf16>, tensor<2x3x8xbf16> -> tensor<2x3x24xbf16>
  func.return %o, %d : tensor<2x3x8xbf16>, tensor<2x3x24xbf16>
}
func.func @packed(%qkv: tensor<2x3x24xbf16>, %g: tensor<2x3x8xbf16>) -> (tensor<2x3x8xbf16>, tensor<2x3x24xbf16>) {
  %o = graph.packed_attention %qkv {heads = 2 : i64, causal} : tensor<2x3x24xbf16> -> tensor<2x3x8xbf16>
  %d = graph.packed_attention_backward %qkv, %g {heads = 2 : i64, causal} : tensor<2x3x24xbf16>, tensor<2x3x8xbf16> -> tensor<2x3x24xbf16>
  func.return %o, %d : tensor<2x3x8xbf16>, tensor<2x3x24xbf16>
}
func.func @saved(%qkv: tensor<2x3x24xbf16>, %g: tensor<2x3x8xbf16>) -> (tensor<2x3x8xbf16>, tensor<2x3x24xbf16>, tensor<2x2x3xf32>) {
  %o, %s = graph.packed_attention_stats %qkv {heads = 2 : i64, causal} : tensor<2x3x24xbf16> -> tensor<2x3x8xbf16>, tensor<2x2x3xf32>
  %d = graph.packed_attention_stats_backward %qkv, %o, %s, %g {heads = 2 : i64, causal} : tensor<2x3x24xbf16>, tensor<2x3x8xbf16>, tensor<2x2x3xf32>, tensor<2x3x8xbf16> -> tensor<2x3x24xbf16>
  func.return %o, %d, %s : tensor<2x3x8xbf16>, tensor<2x3x24xbf16>, tensor<2x2x3xf32>
}
func.func @sdpa(%q: tensor<2x4x3x4xbf16>, %k: tensor<2x2x5x4xbf16>, %v: tensor<2x2x5x4xbf16>, %g: tensor<2x4x3x4xbf16>) -> (tensor<2x4x3x4xbf16>, tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>) {
  %o = graph.scaled_dot_product_attention %q, %k, %v {causal} : tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16> -> tensor<2x4x3x4xbf16>
  %dq, %dk, %dv = graph.scaled_dot_product_attention_backward %q, %k, %v, %g {causal} : tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x4x3x4xbf16> -> tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>
  func.return %o, %dq, %dk, %dv : tensor<2x4x3x4xbf16>, tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>
}
func.func @sdpa_saved(%q: tensor<2x4x3x4xbf16>, %k: tensor<2x2x5x4xbf16>, %v: tensor<2x2x5x4xbf16>, %g: tensor<2x4x3x4xbf16>) -> (tensor<2x4x3x4xbf16>, tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x4x3xf32>) {
  %o, %s = graph.scaled_dot_product_attention_stats %q, %k, %v {causal} : tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16> -> tensor<2x4x3x4xbf16>, tensor<2x4x3xf32>
  %dq, %dk, %dv = graph.scaled_dot_product_attention_stats_backward %q, %k, %v, %o, %s, %g {causal} : tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x4x3x4xbf16>, tensor<2x4x3xf32>, tensor<2x4x3x4xbf16> -> tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>
  func.return %o, %dq, %dk, %dv, %s : tensor<2x4x3x4xbf16>, tensor<2x4x3x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x2x5x4xbf16>, tensor<2x4x3xf32>
}
)mlir";

// Values exact in bf16 (multiples of 1/16 in [-1, 1)).
Tensor filled(Shape shape, int64_t seed) {
  std::vector<double> v(size_t(numElements(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = double(int64_t((i * 7 + size_t(seed)) % 32) - 16) / 16.0;
  return Tensor::floats(std::move(shape), std::move(v), ElemType::BF16);
}

TEST(InterpPackedAttention, SameAsUnfusedGraph) {
  auto context = ampc::createContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kIr, context.get());
  ASSERT_TRUE(module);
  std::vector<Tensor> args{filled({2, 3, 24}, 3), filled({2, 3, 8}, 5)};
  for (Numerics n : {Numerics::Typed, Numerics::FP64}) {
    Interpreter interp(InterpOptions{n});
    auto want =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("unfused"), args);
    auto got =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("packed"), args);
    ASSERT_TRUE(succeeded(want) && succeeded(got));
    ASSERT_EQ(got->size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      ASSERT_EQ((*got)[r].shape, (*want)[r].shape);
      for (size_t i = 0; i < (*got)[r].f.size(); ++i)
        EXPECT_EQ((*got)[r].f[i], (*want)[r].f[i])
            << "result " << r << " [" << i << "]";
    }
    // Not trivially zero: the gradient has nonzero entries in each third.
    for (int p = 0; p < 3; ++p) {
      bool nonzero = false;
      for (int i = 0; i < 8; ++i)
        nonzero |= (*got)[1].f[size_t(24 + p * 8 + i)] != 0.0;
      EXPECT_TRUE(nonzero) << "third " << p;
    }
  }
}

// graph-save-attention-stats' ops: the same result and gradient as
// packed_attention and its backward, and each row's log-sum-exp (row 0 of
// a causal head sees one key: the statistic is its scaled score).
TEST(InterpPackedAttention, SavedStatsSameAsPacked) {
  auto context = ampc::createContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kIr, context.get());
  ASSERT_TRUE(module);
  std::vector<Tensor> args{filled({2, 3, 24}, 3), filled({2, 3, 8}, 5)};
  for (Numerics n : {Numerics::Typed, Numerics::FP64}) {
    Interpreter interp(InterpOptions{n});
    auto want =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("packed"), args);
    auto got =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("saved"), args);
    ASSERT_TRUE(succeeded(want) && succeeded(got));
    ASSERT_EQ(got->size(), 3u);
    for (size_t r = 0; r < 2; ++r)
      for (size_t i = 0; i < (*got)[r].f.size(); ++i)
        EXPECT_EQ((*got)[r].f[i], (*want)[r].f[i])
            << "result " << r << " [" << i << "]";
    const std::vector<double> &qkv = args[0].f, &stats = (*got)[2].f;
    ASSERT_EQ(stats.size(), 12u);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h) {
        double dot = 0; // q0 . k0 of head h: offsets in [B, T, 3, H, D]
        for (int64_t c = 0; c < 4; ++c)
          dot += qkv[size_t(b * 72 + h * 4 + c)] *
                 qkv[size_t(b * 72 + 8 + h * 4 + c)];
        double want = n == Numerics::Typed ? double(float(dot / 2.0)) : dot / 2.0;
        EXPECT_EQ(stats[size_t((b * 2 + h) * 3)], want) << b << " " << h;
      }
  }
}

// scaled_dot_product_attention_stats and its backward (grouped-query,
// causal, more keys than queries): the attention's result and gradients,
// and each row's log-sum-exp (row 0 sees one key: its scaled score).
TEST(InterpPackedAttention, SdpaSavedStatsSameAsAttention) {
  auto context = ampc::createContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kIr, context.get());
  ASSERT_TRUE(module);
  std::vector<Tensor> args{filled({2, 4, 3, 4}, 3), filled({2, 2, 5, 4}, 5),
                           filled({2, 2, 5, 4}, 7), filled({2, 4, 3, 4}, 9)};
  for (Numerics n : {Numerics::Typed, Numerics::FP64}) {
    Interpreter interp(InterpOptions{n});
    auto want =
        interp.runFunction(module->lookupSymbol<func::FuncOp>("sdpa"), args);
    auto got = interp.runFunction(
        module->lookupSymbol<func::FuncOp>("sdpa_saved"), args);
    ASSERT_TRUE(succeeded(want) && succeeded(got));
    ASSERT_EQ(got->size(), 5u);
    for (size_t r = 0; r < 4; ++r)
      for (size_t i = 0; i < (*got)[r].f.size(); ++i)
        EXPECT_EQ((*got)[r].f[i], (*want)[r].f[i])
            << "result " << r << " [" << i << "]";
    const std::vector<double> &q = args[0].f, &k = args[1].f,
                              &stats = (*got)[4].f;
    ASSERT_EQ(stats.size(), 24u);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 4; ++h) {
        double dot = 0; // q row 0 of head h . k row 0 of kv head h / 2
        for (int64_t c = 0; c < 4; ++c)
          dot += q[size_t(((b * 4 + h) * 3) * 4 + c)] *
                 k[size_t(((b * 2 + h / 2) * 5) * 4 + c)];
        EXPECT_NEAR(stats[size_t((b * 4 + h) * 3)], dot * 0.5, 1e-6);
      }
  }
}

} // namespace
