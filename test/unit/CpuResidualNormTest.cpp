//===- CpuResidualNormTest.cpp - The residual add inside layer_norm -------===//
//
// kernel.add_layer_norm and kernel.layer_norm_backward_add (and the RMS
// forms) give the bits of the ops kernel-fuse-residual-norm replaces: the
// add, then the norm; the norm's backward, then the add (+ cast).
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

namespace ampc::cpu::test {
namespace {

void expectSameBits(const Tensor &a, const Tensor &b, const char *what) {
  ASSERT_EQ(a.dtype, b.dtype) << what;
  ASSERT_EQ(a.numel(), b.numel()) << what;
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_EQ(a.bits(i), b.bits(i)) << what << " at " << i;
}

TEST(CpuResidualNorm, AddLayerNormIsTheAddThenTheNorm) {
  // d = 40: not a multiple of 8; 3 x 5 rows. A bf16 and an f32 delta,
  // with and without weight and bias, results in bf16 and f32.
  for (DType delta : {DType::BF16, DType::F32, DType::F16})
    for (DType out : {DType::BF16, DType::F32})
      for (bool affine : {true, false}) {
        SCOPED_TRACE(std::string(name(delta)) + " -> " + name(out) +
                     (affine ? " affine" : ""));
        Tensor r = randomTensor(DType::F32, {3, 5, 40}, 1, -3, 3);
        Tensor d = randomTensor(delta, {3, 5, 40}, 2);
        Tensor w = randomTensor(DType::F32, {40}, 3, 0.5, 1.5);
        Tensor b = randomTensor(DType::F32, {40}, 4);
        Attrs eps{{"eps", 1e-3}};
        Tensor sum(DType::F32, {3, 5, 40}), y(out, {3, 5, 40});
        Tensor refSum(DType::F32, {3, 5, 40}), refY(out, {3, 5, 40});
        run("graph.add", {&r, &d}, {&refSum});
        if (affine) {
          run("kernel.add_layer_norm", {&r, &d, &w, &b}, {&sum, &y}, eps);
          run("graph.layer_norm", {&refSum, &w, &b}, {&refY}, eps);
        } else {
          run("kernel.add_layer_norm", {&r, &d}, {&sum, &y}, eps);
          run("graph.layer_norm", {&refSum}, {&refY}, eps);
        }
        expectSameBits(sum, refSum, "sum");
        expectSameBits(y, refY, "y");
      }
}

TEST(CpuResidualNorm, AddLayerNormValues) {
  // One row: [0, 1] + [1, 2] = [1, 3]: mean 2, biased variance 1, and
  // 1 + eps rounds to 1 in float, so y = [-1, 1] exactly.
  Tensor a = fromValues(DType::F32, {1, 2}, {0, 1});
  Tensor b = fromValues(DType::BF16, {1, 2}, {1, 2});
  Tensor sum(DType::F32, {1, 2}), y(DType::F32, {1, 2});
  run("kernel.add_layer_norm", {&a, &b}, {&sum, &y}, Attrs{{"eps", 0x1p-40}});
  EXPECT_EQ(sum.values(), (std::vector<double>{1, 3}));
  EXPECT_EQ(y.values(), (std::vector<double>{-1, 1}));
}

TEST(CpuResidualNorm, BackwardAddIsTheBackwardThenTheAddAndCast) {
  for (DType g : {DType::BF16, DType::F32})
    for (DType half : {DType::BF16, DType::F16}) {
      SCOPED_TRACE(std::string(name(g)) + " g, " + name(half) + " copy");
      Tensor x = randomTensor(DType::F32, {6, 24}, 5, -3, 3);
      Tensor w = randomTensor(DType::F32, {24}, 6, 0.5, 1.5);
      Tensor gy = randomTensor(g, {6, 24}, 7);
      Tensor acc = randomTensor(DType::F32, {6, 24}, 8, -0.1, 0.1);
      Tensor dx(DType::F32, {6, 24}), dw(DType::F32, {24}),
          db(DType::F32, {24}), dxh(half, {6, 24});
      run("kernel.layer_norm_backward_add", {&x, &w, &gy, &acc},
          {&dx, &dw, &db, &dxh});
      Tensor rdx(DType::F32, {6, 24}), rdw(DType::F32, {24}),
          rdb(DType::F32, {24}), rsum(DType::F32, {6, 24}), rh(half, {6, 24});
      run("graph.layer_norm_backward", {&x, &w, &gy}, {&rdx, &rdw, &rdb});
      run("graph.add", {&acc, &rdx}, {&rsum});
      run("graph.cast", {&rsum}, {&rh});
      expectSameBits(dx, rsum, "dx_sum");
      expectSameBits(dxh, rh, "dx_half");
      expectSameBits(dw, rdw, "dweight");
      expectSameBits(db, rdb, "dbias");
      // Without the half copy: the same sum.
      Tensor dx2(DType::F32, {6, 24});
      run("kernel.layer_norm_backward_add", {&x, &w, &gy, &acc},
          {&dx2, &dw, &db});
      expectSameBits(dx2, rsum, "dx_sum without the copy");
    }
}

TEST(CpuResidualNorm, RmsFormsAreTheSeparateOps) {
  for (DType delta : {DType::BF16, DType::F32})
    for (bool weight : {true, false}) {
      SCOPED_TRACE(std::string(name(delta)) + (weight ? " weight" : ""));
      Tensor r = randomTensor(DType::F32, {7, 24}, 11, -3, 3);
      Tensor d = randomTensor(delta, {7, 24}, 12);
      Tensor w = randomTensor(DType::F32, {24}, 13, 0.5, 1.5);
      Tensor sum(DType::F32, {7, 24}), y(DType::BF16, {7, 24});
      Tensor refSum(DType::F32, {7, 24}), refY(DType::BF16, {7, 24});
      run("graph.add", {&r, &d}, {&refSum});
      // No eps: f32's machine epsilon (the sum's type) on both sides.
      if (weight) {
        run("kernel.add_rms_norm", {&r, &d, &w}, {&sum, &y});
        run("graph.rms_norm", {&refSum, &w}, {&refY});
      } else {
        run("kernel.add_rms_norm", {&r, &d}, {&sum, &y});
        run("graph.rms_norm", {&refSum}, {&refY});
      }
      expectSameBits(sum, refSum, "sum");
      expectSameBits(y, refY, "y");
    }
  Tensor x = randomTensor(DType::F32, {7, 24}, 14, -3, 3);
  Tensor w = randomTensor(DType::F32, {24}, 15, 0.5, 1.5);
  Tensor g = randomTensor(DType::BF16, {7, 24}, 16);
  Tensor acc = randomTensor(DType::F32, {7, 24}, 17, -0.1, 0.1);
  Attrs eps{{"eps", 1e-5}};
  Tensor dx(DType::F32, {7, 24}), dw(DType::F32, {24}), h(DType::BF16, {7, 24});
  run("kernel.rms_norm_backward_add", {&x, &w, &g, &acc}, {&dx, &dw, &h}, eps);
  Tensor rdx(DType::F32, {7, 24}), rdw(DType::F32, {24}),
      rsum(DType::F32, {7, 24}), rh(DType::BF16, {7, 24});
  run("graph.rms_norm_backward", {&x, &w, &g}, {&rdx, &rdw}, eps);
  run("graph.add", {&rdx, &acc}, {&rsum});
  run("graph.cast", {&rsum}, {&rh});
  expectSameBits(dx, rsum, "dx_sum");
  expectSameBits(dw, rdw, "dweight");
  expectSameBits(h, rh, "dx_half");
}

TEST(CpuResidualNorm, RejectsBadOperands) {
  Tensor a(DType::F32, {2, 4}), b(DType::F32, {2, 3}), s(DType::F32, {2, 4}),
      hs(DType::BF16, {2, 4}), y(DType::F32, {2, 4}), w(DType::F32, {4});
  EXPECT_THROW(run("kernel.add_layer_norm", {&a, &b}, {&s, &y}),
               std::invalid_argument);
  EXPECT_THROW(run("kernel.add_layer_norm", {&a, &a}, {&hs, &y}),
               std::invalid_argument);
  EXPECT_THROW(run("kernel.layer_norm_backward_add", {&a, &w, &a, &b},
                   {&s, &w, &w}),
               std::invalid_argument);
  EXPECT_THROW(run("kernel.layer_norm_backward_add", {&a, &w, &a, &a},
                   {&hs, &w, &w}),
               std::invalid_argument);
}

} // namespace
} // namespace ampc::cpu::test
