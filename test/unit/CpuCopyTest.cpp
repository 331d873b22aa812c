//===- CpuCopyTest.cpp - The strided copy's paths against index formulas --===//
//
// runtime/cpu/Shape.cpp merges runs of dimensions, copies contiguous rows
// with memcpy and transposes the last two dimensions in tiles: each path
// against the element-by-element definition, bit for bit, with sizes that
// leave partial tiles.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

namespace ampc::cpu::test {
namespace {

// y = transpose(x, perm) by its definition, compared bit for bit.
void expectTranspose(DType t, std::vector<int64_t> shape,
                     std::vector<int64_t> perm) {
  Tensor x = randomTensor(t, shape, 7);
  int rank = int(shape.size());
  std::vector<int64_t> yshape(rank), xstride(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    xstride[d] = xstride[d + 1] * shape[d + 1];
  for (int d = 0; d < rank; ++d)
    yshape[d] = shape[perm[d]];
  Tensor y(t, yshape);
  run("graph.transpose", {&x}, {&y}, Attrs{{"perm", perm}});
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rest = i, src = 0;
    for (int d = rank - 1; d >= 0; --d) {
      src += (rest % yshape[d]) * xstride[perm[d]];
      rest /= yshape[d];
    }
    ASSERT_EQ(y.bits(i), x.bits(src)) << "element " << i;
  }
}

TEST(CpuCopy, HeadTransposeCopiesRows) {
  expectTranspose(DType::F32, {3, 5, 4, 6}, {0, 2, 1, 3});
  expectTranspose(DType::BF16, {2, 7, 3, 5}, {0, 2, 1, 3});
}

TEST(CpuCopy, LastTwoDimensionsInTiles) {
  expectTranspose(DType::F32, {37, 21}, {1, 0});
  expectTranspose(DType::F32, {16, 48}, {1, 0});
  expectTranspose(DType::F16, {2, 19, 33}, {0, 2, 1});
  expectTranspose(DType::I64, {3, 2, 17, 5}, {1, 0, 3, 2});
}

TEST(CpuCopy, SizeOneAndMergedDimensions) {
  expectTranspose(DType::F32, {1, 3, 1, 4}, {3, 1, 2, 0});
  expectTranspose(DType::F32, {2, 3, 4, 5}, {2, 3, 0, 1});
  expectTranspose(DType::F32, {2, 3, 4}, {0, 1, 2});
  expectTranspose(DType::F32, {1, 1}, {1, 0});
}

TEST(CpuCopy, SliceOfContiguousRows) {
  Tensor x = randomTensor(DType::F32, {4, 6, 10}, 3);
  Tensor y(DType::F32, {4, 6, 6});
  run("graph.slice", {&x}, {&y},
      Attrs{{"starts", {0, 0, 2}}, {"limits", {4, 6, 8}}});
  for (int64_t r = 0; r < 24; ++r)
    for (int64_t j = 0; j < 6; ++j)
      ASSERT_EQ(y.bits(r * 6 + j), x.bits(r * 10 + 2 + j));
}

} // namespace
} // namespace ampc::cpu::test
