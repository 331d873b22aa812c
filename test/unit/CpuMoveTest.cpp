//===- CpuMoveTest.cpp - Transposed GEMM operands, slices with perm -------===//
//
// lhs_transposed / rhs_transposed read the operand in place (cblas' flags):
// exact against a double reference on small integers (every sum exact in
// every type). graph.slice / slice_backward with `perm` are the slice and
// the transpose in one copy: bit for bit the two-op result. graph.concat
// with `perm` is the transposes and the concat in one copy, and bit for bit
// the sum of slice_backward results it replaces (attention's q/k/v
// gradients).
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

namespace ampc::cpu::test {
namespace {

// Integers in [-3, 3]: products and sums of a few are exact in f16/bf16.
Tensor smallInts(DType t, std::vector<int64_t> shape, uint32_t seed) {
  Tensor x(t, std::move(shape));
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, double(int(gen() % 7) - 3));
  return x;
}

// C[z] = op(A[z]) op(B[z]) in double; A stored [k, m] when ta, B [n, k]
// when tb.
std::vector<double> gemmRef(const Tensor &a, const Tensor &b, int64_t batch,
                            int64_t m, int64_t k, int64_t n, bool ta,
                            bool tb) {
  std::vector<double> c(size_t(batch * m * n), 0.0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += a.get(z * m * k + (ta ? l * m + i : i * k + l)) *
               b.get(z * k * n + (tb ? j * k + l : l * n + j));
        c[size_t((z * m + i) * n + j)] = s;
      }
  return c;
}

TEST(CpuMove, MatmulTransposedOperands) {
  const int64_t m = 5, k = 7, n = 3;
  for (DType t : kFloatTypes)
    for (int f = 0; f < 4; ++f) {
      bool ta = f & 1, tb = f & 2;
      SCOPED_TRACE(std::string(name(t)) + " ta=" + std::to_string(ta) +
                   " tb=" + std::to_string(tb));
      Tensor a = smallInts(t, ta ? std::vector<int64_t>{k, m}
                                 : std::vector<int64_t>{m, k}, 1);
      Tensor b = smallInts(t, tb ? std::vector<int64_t>{n, k}
                                 : std::vector<int64_t>{k, n}, 2);
      Tensor c(t, {m, n});
      Attrs attrs;
      if (ta)
        attrs.set("lhs_transposed", true);
      if (tb)
        attrs.set("rhs_transposed", true);
      run("graph.matmul", {&a, &b}, {&c}, attrs);
      expectEqual(c, gemmRef(a, b, 1, m, k, n, ta, tb), "matmul");
    }
}

TEST(CpuMove, BatchMatmulTransposedOperands) {
  const int64_t z = 6, m = 4, k = 9, n = 5;
  for (DType t : kFloatTypes)
    for (int f = 0; f < 4; ++f) {
      bool ta = f & 1, tb = f & 2;
      SCOPED_TRACE(std::string(name(t)) + " ta=" + std::to_string(ta) +
                   " tb=" + std::to_string(tb));
      Tensor a = smallInts(t, ta ? std::vector<int64_t>{2, 3, k, m}
                                 : std::vector<int64_t>{2, 3, m, k}, 3);
      Tensor b = smallInts(t, tb ? std::vector<int64_t>{2, 3, n, k}
                                 : std::vector<int64_t>{2, 3, k, n}, 4);
      Tensor c(t, {2, 3, m, n});
      run("graph.batch_matmul", {&a, &b}, {&c},
          Attrs{{"lhs_transposed", ta}, {"rhs_transposed", tb}});
      expectEqual(c, gemmRef(a, b, z, m, k, n, ta, tb), "batch_matmul");
    }
}

// A flag on the wrong shape is the shape check's error, not a wild read.
TEST(CpuMove, TransposedShapeMismatchFails) {
  Tensor a(DType::F32, {4, 8}), b(DType::F32, {8, 16}), c(DType::F32, {4, 16});
  EXPECT_THROW(run("graph.matmul", {&a, &b}, {&c},
                   Attrs{{"lhs_transposed", true}}),
               std::invalid_argument);
}

// The attention head split: [B, T, 3C] sliced at the k columns, viewed
// [B, T, 3H, D] and permuted to [B, H, T, D] in one copy.
TEST(CpuMove, SliceWithPermIsSliceThenTranspose) {
  for (DType t : {DType::F32, DType::BF16}) {
    Tensor x = randomTensor(t, {2, 5, 12, 3}, 9); // [B, T, 3H, D], H = 4
    Attrs slice{{"starts", {0, 0, 4, 0}}, {"limits", {2, 5, 8, 3}}};
    Tensor s(t, {2, 5, 4, 3}), want(t, {2, 4, 5, 3}), got(t, {2, 4, 5, 3});
    run("graph.slice", {&x}, {&s}, slice);
    run("graph.transpose", {&s}, {&want}, Attrs{{"perm", {0, 2, 1, 3}}});
    Attrs fused = slice;
    fused.set("perm", {0, 2, 1, 3});
    run("graph.slice", {&x}, {&got}, fused);
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_EQ(got.bits(i), want.bits(i)) << "element " << i;

    // The backward: g [B, H, T, D] into the k columns of dx, zeros elsewhere.
    Tensor g = randomTensor(t, {2, 4, 5, 3}, 10), gt(t, {2, 5, 4, 3});
    Tensor dxWant(t, {2, 5, 12, 3}), dxGot(t, {2, 5, 12, 3});
    for (int64_t i = 0; i < dxGot.numel(); ++i)
      dxGot.set(i, 7.0); // the kernel must write every element
    run("graph.transpose", {&g}, {&gt}, Attrs{{"perm", {0, 2, 1, 3}}});
    run("graph.slice_backward", {&gt}, {&dxWant}, slice);
    run("graph.slice_backward", {&g}, {&dxGot}, fused);
    for (int64_t i = 0; i < dxWant.numel(); ++i)
      ASSERT_EQ(dxGot.bits(i), dxWant.bits(i)) << "element " << i;
  }
}

// dqkv [B, T, 3H, D] from dq, dk, dv [B, H, T, D]: the concat with perm
// against the add of three slice_backward results (the form before
// graph-collapse-data-movement) and against transpose-then-concat.
TEST(CpuMove, ConcatWithPermIsTheSumOfSliceBackwards) {
  for (DType t : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(name(t));
    std::vector<Tensor> g, gt, dx;
    for (uint32_t i = 0; i < 3; ++i) {
      g.push_back(randomTensor(t, {2, 4, 5, 3}, 20 + i));
      gt.emplace_back(t, std::vector<int64_t>{2, 5, 4, 3});
      dx.emplace_back(t, std::vector<int64_t>{2, 5, 12, 3});
    }
    for (int i = 0; i < 3; ++i) {
      Attrs slice{{"starts", {0, 0, 4 * i, 0}},
                  {"limits", {2, 5, 4 * i + 4, 3}},
                  {"perm", {0, 2, 1, 3}}};
      run("graph.slice_backward", {&g[i]}, {&dx[i]}, slice);
      run("graph.transpose", {&g[i]}, {&gt[i]}, Attrs{{"perm", {0, 2, 1, 3}}});
    }
    Tensor sum1(t, {2, 5, 12, 3}), sum(t, {2, 5, 12, 3});
    run("graph.add", {&dx[2], &dx[1]}, {&sum1});
    run("graph.add", {&sum1, &dx[0]}, {&sum});
    Tensor joined(t, {2, 5, 12, 3}), got(t, {2, 5, 12, 3});
    run("graph.concat", {&gt[0], &gt[1], &gt[2]}, {&joined},
        Attrs{{"axis", int64_t(2)}});
    for (int64_t i = 0; i < got.numel(); ++i)
      got.set(i, 7.0); // the kernel must write every element
    run("graph.concat", {&g[0], &g[1], &g[2]}, {&got},
        Attrs{{"axis", int64_t(2)}, {"perm", {0, 2, 1, 3}}});
    for (int64_t i = 0; i < got.numel(); ++i) {
      ASSERT_EQ(got.bits(i), sum.bits(i)) << "element " << i;
      ASSERT_EQ(got.bits(i), joined.bits(i)) << "element " << i;
    }
  }
}

// A perm that is not its own inverse, inputs of different sizes: a [2, 3]
// and b [2, 1] transposed by (1, 0) and joined on axis 0 give
// [a^T; b^T] = [[a00, a10], [a01, a11], [a02, a12], [b00, b10]].
TEST(CpuMove, ConcatWithPermExact) {
  Tensor a = fromValues(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = fromValues(DType::F32, {2, 1}, {7, 8});
  Tensor y(DType::F32, {4, 2});
  run("graph.concat", {&a, &b}, {&y},
      Attrs{{"axis", int64_t(0)}, {"perm", {1, 0}}});
  EXPECT_EQ(y.values(), (std::vector<double>{1, 4, 2, 5, 3, 6, 7, 8}));
}

TEST(CpuMove, ConcatBadPermFails) {
  Tensor a(DType::F32, {2, 3}), y(DType::F32, {6, 2});
  EXPECT_THROW(run("graph.concat", {&a, &a}, {&y},
                   Attrs{{"axis", int64_t(0)}, {"perm", {1, 1}}}),
               std::invalid_argument);
  // Untransposed, [2, 3] twice on axis 0 is [4, 3], not [6, 2].
  EXPECT_THROW(run("graph.concat", {&a, &a}, {&y},
                   Attrs{{"axis", int64_t(0)}}),
               std::invalid_argument);
}

TEST(CpuMove, SliceBadPermFails) {
  Tensor x(DType::F32, {2, 3}), y(DType::F32, {3, 2});
  EXPECT_THROW(run("graph.slice", {&x}, {&y},
                   Attrs{{"starts", {0, 0}}, {"limits", {2, 3}},
                         {"perm", {0, 0}}}),
               std::invalid_argument);
}

} // namespace
} // namespace ampc::cpu::test
