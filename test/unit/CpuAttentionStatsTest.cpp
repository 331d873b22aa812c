//===- CpuAttentionStatsTest.cpp - packed_attention_stats on the CPU -------===//
//
// graph-save-attention-stats must not change the CPU target's values:
// packed_attention_stats' result is bitwise packed_attention's, its
// backward bitwise packed_attention_backward's whatever o and stats hold
// (this library recomputes them); the statistics are each row's
// log-sum-exp, checked against the direct log(sum(exp(s))) in FP64 and,
// for causal row 0 (one visible key), against scale * q0 . k0.
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

} // namespace
} // namespace ampc::cpu::test
