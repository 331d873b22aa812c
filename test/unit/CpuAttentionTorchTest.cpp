//===- CpuAttentionTorchTest.cpp - attention against PyTorch's numbers ----===//
//
// scaled_dot_product_attention with grouped-query heads and masks on the CPU
// kernels, in FP32, against PyTorch 2.15's float64 results (enable_gqa=True,
// attn_mask) committed by test/unit/torch/sdpa_expected.py. The inputs are
// the script's closed-form ones.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"
#include "runtime/kernels/Geometry.h"

#include "test/unit/torch/SdpaExpected.inc"

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

namespace ampc::cpu::test {
namespace {

Tensor filled(std::vector<int64_t> shape, double a, double b,
              double (*fn)(double)) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, fn(a * double(i) + b));
  return t;
}

template <size_t N>
std::vector<double> want(const double (&v)[N]) {
  return std::vector<double>(v, v + N);
}

// Runs forward and backward on the script's inputs (g = its cotangent).
void checkAgainstTorch(std::vector<int64_t> qs, std::vector<int64_t> ks,
                       std::vector<int64_t> vs, Tensor &mask, const Attrs &a,
                       const std::vector<double> &o, const std::vector<double> &dq,
                       const std::vector<double> &dk, const std::vector<double> &dv) {
  std::vector<int64_t> os = {qs[0], qs[1], qs[2], vs[3]};
  Tensor q = filled(qs, 0.7, 0.1, std::sin), k = filled(ks, 0.45, 0.3, std::cos);
  Tensor v = filled(vs, 0.31, -0.2, std::sin), g = filled(os, 0.23, 0.5, std::cos);
  Tensor out(DType::F32, os), gq(DType::F32, qs), gk(DType::F32, ks), gv(DType::F32, vs);
  run("graph.scaled_dot_product_attention", {&q, &k, &v, &mask}, {&out}, a);
  expectClose(out, o, 2e-6, 2e-6, "o");
  run("graph.scaled_dot_product_attention_backward", {&q, &k, &v, &g, &mask},
      {&gq, &gk, &gv}, a);
  expectClose(gq, dq, 5e-6, 5e-6, "dq");
  expectClose(gk, dk, 5e-6, 5e-6, "dk");
  expectClose(gv, dv, 5e-6, 5e-6, "dv");
}

// An integer keep-mask [B, 1, T, S] (a fully masked row included) on four
// query heads sharing two kv heads.
TEST(CpuAttentionTorch, GroupedQueryKeepMask) {
  const int64_t B = 2, T = 3, S = 5;
  for (DType mt : {DType::I64, DType::I32}) {
    SCOPED_TRACE(name(mt));
    Tensor keep(mt, {B, 1, T, S});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < S; ++j)
          keep.set((b * T + i) * S + j,
                   (b + i + 2 * j) % 3 != 0 && !(b == 1 && i == 1));
    checkAgainstTorch({B, 4, T, 4}, {B, 2, S, 4}, {B, 2, S, 2}, keep, Attrs{},
                      want(kKeep_o), want(kKeep_dq), want(kKeep_dk), want(kKeep_dv));
  }
}

// An additive float mask [T, S] with -inf entries, with causal: PyTorch gets
// the causal triangle folded into its mask, ampc applies both.
TEST(CpuAttentionTorch, GroupedQueryAdditiveMaskCausal) {
  const int64_t T = 4, S = 4;
  Tensor add(DType::F32, {T, S});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < S; ++j)
      add.set(i * S + j, (i + j) % 4 != 3 ? 0.1 * double(i - j) : -INFINITY);
  checkAgainstTorch({1, 6, T, 3}, {1, 2, S, 3}, {1, 2, S, 3}, add,
                    Attrs{{"causal", true}, {"scale", 0.6}}, want(kAdditive_o),
                    want(kAdditive_dq), want(kAdditive_dk), want(kAdditive_dv));
}

// Without a mask and with one kv head per query head the results are the
// ones before grouped heads and masks existed: the same bits as a mask of
// all-keep (an additive 0 changes no score) and the bits of the explicit
// per-head reference loop.
TEST(CpuAttentionTorch, NoMaskEqualsAllKeepMaskBitwise) {
  Tensor q = randomTensor(DType::F16, {2, 2, 5, 4}, 1), k = randomTensor(DType::F16, {2, 2, 6, 4}, 2);
  Tensor v = randomTensor(DType::F16, {2, 2, 6, 3}, 3);
  Tensor keep(DType::I64, {6});
  for (int64_t j = 0; j < 6; ++j) keep.set(j, 1);
  for (bool causal : {false, true}) {
    Tensor o1(DType::F16, {2, 2, 5, 3}), o2(DType::F16, {2, 2, 5, 3});
    Attrs a{{"causal", causal}};
    run("graph.scaled_dot_product_attention", {&q, &k, &v}, {&o1}, a);
    run("graph.scaled_dot_product_attention", {&q, &k, &v, &keep}, {&o2}, a);
    for (int64_t i = 0; i < o1.numel(); ++i)
      ASSERT_EQ(o1.bits(i), o2.bits(i)) << i;
  }
}

std::string errorOf(auto &&f) {
  try {
    f();
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "no error";
}

// Grouped heads are one GEMM problem per kv head (runtime/kernels/Geometry.h):
// batch counts kv heads, t = group * tq rows.
TEST(CpuAttentionGeometry, GroupedHeadsAndMaskView) {
  using ampc::kernels::detail::attentionGeometry;
  using ampc::kernels::detail::attentionMask;
  static char dummy;
  auto ref = [](std::vector<int64_t> s, DType t = DType::F32) {
    return makeRef(&dummy, t, s);
  };
  TensorRef q = ref({2, 6, 5, 4}), k = ref({2, 2, 7, 4}), v = ref({2, 2, 7, 8});
  auto g = attentionGeometry("graph.sdpa", q, k, v, Attrs{});
  EXPECT_EQ(g.batch, 4);
  EXPECT_EQ(g.group, 3);
  EXPECT_EQ(g.tq, 5);
  EXPECT_EQ(g.t, 15);
  EXPECT_EQ(errorOf([&] { attentionGeometry("graph.sdpa", q, ref({2, 4, 7, 4}), ref({2, 4, 7, 8}), Attrs{}); }),
            "graph.sdpa: batch/head dimensions differ");
  EXPECT_EQ(errorOf([&] { attentionGeometry("graph.sdpa", q, ref({1, 2, 7, 4}), ref({1, 2, 7, 8}), Attrs{}); }),
            "graph.sdpa: batch/head dimensions differ");
  // [B, 1, T, S] keep-mask: strides 35 over B, 0 over heads, 7 over T.
  auto m = attentionMask("graph.sdpa", q, k, ref({2, 1, 5, 7}, DType::I64));
  EXPECT_FALSE(m.additive);
  EXPECT_EQ(m.offset(7, 2, 3), 1 * 35 + 2 * 7 + 3);
  auto f = attentionMask("graph.sdpa", q, k, ref({7}));
  EXPECT_TRUE(f.additive);
  EXPECT_EQ(f.offset(11, 4, 6), 6);
  EXPECT_EQ(errorOf([&] { attentionMask("graph.sdpa", q, k, ref({5, 5})); }),
            "graph.sdpa: shapes do not broadcast");
  EXPECT_EQ(errorOf([&] { attentionMask("graph.sdpa", q, k, ref({7}, DType::F16)); }),
            "graph.sdpa: a float mask must have q's element type");
}

} // namespace
} // namespace ampc::cpu::test
