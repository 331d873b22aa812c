//===- CpuPackedAttentionTest.cpp - packed_attention against the unfused ops ===//
//
// graph.packed_attention and its backward on the CPU library are bitwise
// the unfused graph: q, k, v sliced out of qkv [B, T, 3, H, D] and moved to
// [B, H, T, D], scaled_dot_product_attention(_backward) on them, the result
// (dq, dk, dv) moved back. The moves are done here by hand, so a wrong
// gather or scatter permutation in the kernel shows as a mismatch.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

#include <string>

namespace ampc::cpu::test {
namespace {

constexpr int64_t B = 2, T = 5, H = 3, D = 4, E = H * D;

// Element (b, t, h, d) of part p (0 q, 1 k, 2 v) in a [B, T, 3E] tensor, and
// of a [B, H, T, D] and a [B, T, H, D] tensor.
int64_t packedAt(int64_t p, int64_t b, int64_t t, int64_t h, int64_t d) {
  return ((b * T + t) * 3 + p) * E + h * D + d;
}
int64_t headsAt(int64_t b, int64_t t, int64_t h, int64_t d) {
  return ((b * H + h) * T + t) * D + d;
}
int64_t rowsAt(int64_t b, int64_t t, int64_t h, int64_t d) {
  return ((b * T + t) * H + h) * D + d;
}

template <typename F> void each(F f) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          f(b, t, h, d);
}

// Raw element copy (exact in any type).
void copyElem(const Tensor &src, int64_t i, Tensor &dst, int64_t j) {
  size_t s = dtypeSize(src.dtype);
  std::memcpy(dst.bytes.data() + j * s, src.bytes.data() + i * s, s);
}

void expectBitwise(const Tensor &got, const Tensor &want,
                   const std::string &what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i)
    if (got.bits(i) != want.bits(i)) {
      ++bad;
      ADD_FAILURE() << what << " [" << i << "]: " << got.get(i)
                    << " != " << want.get(i);
    }
}

class CpuPackedAttention
    : public ::testing::TestWithParam<std::tuple<DType, bool>> {};

TEST_P(CpuPackedAttention, SameBitsAsUnfused) {
  auto [dt, causal] = GetParam();
  Attrs attrs{{"heads", H}};
  if (causal)
    attrs.set("causal", true);
  Tensor qkv = randomTensor(dt, {B, T, 3 * E}, 7);
  Tensor g = randomTensor(dt, {B, T, E}, 11);

  // The unfused graph, moves by hand.
  std::vector<Tensor> parts(3, Tensor(dt, {B, H, T, D}));
  Tensor gh(dt, {B, H, T, D});
  each([&](int64_t b, int64_t t, int64_t h, int64_t d) {
    for (int64_t p = 0; p < 3; ++p)
      copyElem(qkv, packedAt(p, b, t, h, d), parts[p], headsAt(b, t, h, d));
    copyElem(g, rowsAt(b, t, h, d), gh, headsAt(b, t, h, d));
  });
  Tensor oh(dt, {B, H, T, D});
  run("graph.scaled_dot_product_attention", {&parts[0], &parts[1], &parts[2]},
      {&oh}, attrs);
  std::vector<Tensor> dh(3, Tensor(dt, {B, H, T, D}));
  run("graph.scaled_dot_product_attention_backward",
      {&parts[0], &parts[1], &parts[2], &gh}, {&dh[0], &dh[1], &dh[2]}, attrs);
  Tensor wantO(dt, {B, T, E}), wantD(dt, {B, T, 3 * E});
  each([&](int64_t b, int64_t t, int64_t h, int64_t d) {
    copyElem(oh, headsAt(b, t, h, d), wantO, rowsAt(b, t, h, d));
    for (int64_t p = 0; p < 3; ++p)
      copyElem(dh[p], headsAt(b, t, h, d), wantD, packedAt(p, b, t, h, d));
  });

  Tensor o(dt, {B, T, E}), dqkv(dt, {B, T, 3 * E});
  run("graph.packed_attention", {&qkv}, {&o}, attrs);
  run("graph.packed_attention_backward", {&qkv, &g}, {&dqkv}, attrs);
  expectBitwise(o, wantO, "o");
  expectBitwise(dqkv, wantD, "dqkv");
  // The attention is not trivial: some result differs from v itself.
  bool moved = false;
  each([&](int64_t b, int64_t t, int64_t h, int64_t d) {
    moved |= o.get(rowsAt(b, t, h, d)) != qkv.get(packedAt(2, b, t, h, d));
  });
  EXPECT_TRUE(moved);
}

INSTANTIATE_TEST_SUITE_P(
    Types, CpuPackedAttention,
    ::testing::Combine(::testing::Values(DType::F32, DType::BF16, DType::F16),
                       ::testing::Bool()));

TEST(CpuPackedAttention, RejectsHeadsThatDoNotDivide) {
  Tensor qkv(DType::F32, {1, 2, 18}), o(DType::F32, {1, 2, 6});
  EXPECT_ANY_THROW(
      run("graph.packed_attention", {&qkv}, {&o}, Attrs{{"heads", 4}}));
}

} // namespace
} // namespace ampc::cpu::test
