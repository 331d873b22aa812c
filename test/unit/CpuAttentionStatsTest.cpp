//===- CpuAttentionStatsTest.cpp - The attention stats ops on the CPU -----===//
//
// graph-save-attention-stats must not change the CPU target's values:
// packed_attention_stats' result is bitwise packed_attention's, its
// backward bitwise packed_attention_backward's whatever o and stats hold
// (this library recomputes them); the statistics are each row's
// log-sum-exp, checked against the direct log(sum(exp(s))) in FP64 and,
// for causal row 0 (one visible key), against scale * q0 . k0. The same for
// scaled_dot_product_attention_stats and its backward.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

#include <cmath>
#include <string>

namespace ampc::cpu::test {
namespace {

constexpr int64_t B = 2, T = 5, H = 3, D = 4, E = H * D;

void expectBitwise(const Tensor &got, const Tensor &want,
                   const std::string &what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_EQ(got.bits(i), want.bits(i))
        << what << " [" << i << "]: " << got.get(i) << " != " << want.get(i);
}

class CpuAttentionStats
    : public ::testing::TestWithParam<std::tuple<DType, bool>> {};

TEST_P(CpuAttentionStats, SameBitsAsPackedAttention) {
  auto [dt, causal] = GetParam();
  Attrs attrs{{"heads", H}};
  if (causal)
    attrs.set("causal", true);
  Tensor qkv = randomTensor(dt, {B, T, 3 * E}, 7);
  Tensor g = randomTensor(dt, {B, T, E}, 11);

  Tensor wantO(dt, {B, T, E}), wantD(dt, {B, T, 3 * E});
  run("graph.packed_attention", {&qkv}, {&wantO}, attrs);
  run("graph.packed_attention_backward", {&qkv, &g}, {&wantD}, attrs);

  Tensor o(dt, {B, T, E}), stats(DType::F32, {B, H, T});
  run("graph.packed_attention_stats", {&qkv}, {&o, &stats}, attrs);
  expectBitwise(o, wantO, "o");
  // The backward reads neither o nor stats here: garbage gives the same.
  Tensor dqkv(dt, {B, T, 3 * E}), junkO = randomTensor(dt, {B, T, E}, 3),
         junkS = randomTensor(DType::F32, {B, H, T}, 4);
  run("graph.packed_attention_stats_backward", {&qkv, &o, &stats, &g},
      {&dqkv}, attrs);
  expectBitwise(dqkv, wantD, "dqkv");
  Tensor dqkv2(dt, {B, T, 3 * E});
  run("graph.packed_attention_stats_backward", {&qkv, &junkO, &junkS, &g},
      {&dqkv2}, attrs);
  expectBitwise(dqkv2, wantD, "dqkv from other o and stats");

  // The statistics: log(sum_j exp(scale q . k_j)) over the visible keys.
  double scale = 1.0 / std::sqrt(double(D));
  auto at = [](int64_t p, int64_t b, int64_t t, int64_t h) {
    return ((b * T + t) * 3 + p) * E + h * D;
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double sum = 0, first = 0;
        for (int64_t j = 0; j < (causal ? i + 1 : T); ++j) {
          double dot = 0;
          for (int64_t c = 0; c < D; ++c)
            dot += qkv.get(at(0, b, i, h) + c) * qkv.get(at(1, b, j, h) + c);
          sum += std::exp(dot * scale);
          if (j == 0)
            first = dot * scale;
        }
        double got = stats.get((b * H + h) * T + i);
        EXPECT_NEAR(got, std::log(sum), 1e-5) << b << " " << h << " " << i;
        if (causal && i == 0)
          EXPECT_EQ(got, float(first)) << "one key: its score";
      }
}

INSTANTIATE_TEST_SUITE_P(
    Types, CpuAttentionStats,
    ::testing::Combine(::testing::Values(DType::F32, DType::BF16, DType::F16),
                       ::testing::Bool()));

TEST(CpuAttentionStats, RejectsWrongStats) {
  Tensor qkv(DType::F32, {1, 2, 24}), o(DType::F32, {1, 2, 8}),
      stats(DType::F32, {1, 2, 3});
  EXPECT_ANY_THROW(run("graph.packed_attention_stats", {&qkv}, {&o, &stats},
                       Attrs{{"heads", 2}}));
}

// scaled_dot_product_attention_stats and its backward on separate q, k, v:
// the same guarantees, under grouped-query attention (4 query heads on 2
// kv heads) and with more keys than queries.
class CpuSdpaStats : public ::testing::TestWithParam<std::tuple<DType, bool>> {
};

TEST_P(CpuSdpaStats, SameBitsAsTheAttention) {
  auto [dt, causal] = GetParam();
  constexpr int64_t Hq = 4, Hkv = 2, Tq = 3, S = 5;
  Attrs attrs;
  if (causal)
    attrs.set("causal", true);
  Tensor q = randomTensor(dt, {B, Hq, Tq, D}, 21);
  Tensor k = randomTensor(dt, {B, Hkv, S, D}, 22);
  Tensor v = randomTensor(dt, {B, Hkv, S, D}, 23);
  Tensor g = randomTensor(dt, {B, Hq, Tq, D}, 24);

  Tensor wantO(dt, {B, Hq, Tq, D}), wq(dt, {B, Hq, Tq, D}),
      wk(dt, {B, Hkv, S, D}), wv(dt, {B, Hkv, S, D});
  run("graph.scaled_dot_product_attention", {&q, &k, &v}, {&wantO}, attrs);
  run("graph.scaled_dot_product_attention_backward", {&q, &k, &v, &g},
      {&wq, &wk, &wv}, attrs);

  Tensor o(dt, {B, Hq, Tq, D}), stats(DType::F32, {B, Hq, Tq});
  run("graph.scaled_dot_product_attention_stats", {&q, &k, &v}, {&o, &stats},
      attrs);
  expectBitwise(o, wantO, "o");
  Tensor junkO = randomTensor(dt, {B, Hq, Tq, D}, 5),
         junkS = randomTensor(DType::F32, {B, Hq, Tq}, 6);
  for (bool junk : {false, true}) {
    Tensor dq(dt, {B, Hq, Tq, D}), dk(dt, {B, Hkv, S, D}), dv(dt, {B, Hkv, S, D});
    run("graph.scaled_dot_product_attention_stats_backward",
        {&q, &k, &v, junk ? &junkO : &o, junk ? &junkS : &stats, &g},
        {&dq, &dk, &dv}, attrs);
    expectBitwise(dq, wq, junk ? "dq (other o, stats)" : "dq");
    expectBitwise(dk, wk, "dk");
    expectBitwise(dv, wv, "dv");
  }

  // Query head h reads kv head h / 2; causal: keys j <= i.
  double scale = 1.0 / std::sqrt(double(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < Tq; ++i) {
        double sum = 0, first = 0;
        for (int64_t j = 0; j < (causal ? i + 1 : S); ++j) {
          double dot = 0;
          for (int64_t c = 0; c < D; ++c)
            dot += q.get(((b * Hq + h) * Tq + i) * D + c) *
                   k.get(((b * Hkv + h / 2) * S + j) * D + c);
          sum += std::exp(dot * scale);
          if (j == 0)
            first = dot * scale;
        }
        double got = stats.get((b * Hq + h) * Tq + i);
        EXPECT_NEAR(got, std::log(sum), 1e-5) << b << " " << h << " " << i;
        if (causal && i == 0)
          EXPECT_EQ(got, float(first)) << "one key: its score";
      }
}

INSTANTIATE_TEST_SUITE_P(
    Types, CpuSdpaStats,
    ::testing::Combine(::testing::Values(DType::F32, DType::BF16, DType::F16),
                       ::testing::Bool()));

TEST(CpuSdpaStats, RejectsWrongStats) {
  Tensor q(DType::F32, {1, 2, 3, 4}), k(DType::F32, {1, 2, 3, 4}),
      v(DType::F32, {1, 2, 3, 4}), o(DType::F32, {1, 2, 3, 4}),
      stats(DType::F32, {1, 2, 4});
  EXPECT_ANY_THROW(run("graph.scaled_dot_product_attention_stats",
                       {&q, &k, &v}, {&o, &stats}));
}

} // namespace
} // namespace ampc::cpu::test
