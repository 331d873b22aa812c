//===- CpuConvTransposeTest.cpp - conv_transpose2d against PyTorch --------===//
//
// The CPU kernel and the ops its VJP is made of, against
// torch.nn.functional.conv_transpose2d and its autograd gradients
// (test/unit/Inputs/conv_transpose_fixture.h, written by
// test/unit/conv_transpose_torch.py). Every value is exact in float32, so
// the checks are equalities.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"
#include "test/unit/Inputs/conv_transpose_fixture.h"

namespace ampc::cpu::test {
namespace {

namespace fx = conv_transpose_fixture;

std::vector<double> doubles(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

Attrs convAttrs(bool withOutputPadding) {
  Attrs a{{"stride", {2, 1}},
          {"padding", {1, 0}},
          {"dilation", {1, 2}},
          {"groups", int64_t(2)}};
  if (withOutputPadding)
    a.set("output_padding", {1, 0});
  return a;
}

struct Operands {
  Tensor x = fromValues(DType::F32, {2, 4, 3, 3}, doubles(fx::x()));
  Tensor w = fromValues(DType::F32, {4, 3, 3, 2}, doubles(fx::w()));
  Tensor b = fromValues(DType::F32, {6}, doubles(fx::b()));
  Tensor dy = fromValues(DType::F32, {2, 6, 6, 5}, doubles(fx::dy()));
};

TEST(CpuConvTranspose, ForwardMatchesPyTorch) {
  Operands o;
  Tensor y(DType::F32, {2, 6, 6, 5});
  run("graph.conv_transpose2d", {&o.x, &o.w, &o.b}, {&y}, convAttrs(true));
  expectEqual(y, doubles(fx::y), "y");
  // Without the bias: y - bias per channel (still exact).
  Tensor y0(DType::F32, {2, 6, 6, 5});
  run("graph.conv_transpose2d", {&o.x, &o.w}, {&y0}, convAttrs(true));
  std::vector<double> want = doubles(fx::y);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] -= fx::b()[(i / 30) % 6];
  expectEqual(y0, want, "y without bias");
}

// The VJP's ops: dx = conv2d(dy, w), dw = conv2d_backward_weight(dy, x),
// db = sum of dy over N, H, W.
TEST(CpuConvTranspose, VjpOpsMatchPyTorchGradients) {
  Operands o;
  Tensor dx(DType::F32, {2, 4, 3, 3}), dw(DType::F32, {4, 3, 3, 2}),
      db(DType::F32, {6});
  run("graph.conv2d", {&o.dy, &o.w}, {&dx}, convAttrs(false));
  expectEqual(dx, doubles(fx::dx), "dx");
  run("graph.conv2d_backward_weight", {&o.dy, &o.x}, {&dw}, convAttrs(false));
  expectEqual(dw, doubles(fx::dw), "dw");
  run("graph.reduce_sum", {&o.dy}, {&db},
      Attrs{{"axes", {0, 2, 3}}, {"keepdim", int64_t(0)}});
  expectEqual(db, doubles(fx::db), "db");
}

// f16 operands and result (the bias added in float before the rounding):
// every fixture value is exact in half, so the result is PyTorch's.
TEST(CpuConvTranspose, HalfOperandsAndResult) {
  Tensor xh = fromValues(DType::F16, {2, 4, 3, 3}, doubles(fx::x()));
  Tensor wh = fromValues(DType::F16, {4, 3, 3, 2}, doubles(fx::w()));
  Tensor bh = fromValues(DType::F16, {6}, doubles(fx::b()));
  Tensor y(DType::F16, {2, 6, 6, 5});
  run("graph.conv_transpose2d", {&xh, &wh, &bh}, {&y}, convAttrs(true));
  expectEqual(y, doubles(fx::y), "y (f16; every value is exact in half)");
}

// The bias joins the float sum before the one rounding: x = w = 1 + 2^-10,
// bias 2^-11 give 1 + 2^-9 + 2^-11 + 2^-20, which rounds up to
// 1 + 3 * 2^-10; rounding the product first (1 + 2^-9) and then adding the
// bias would land on a tie and round to even, 1 + 2^-9.
TEST(CpuConvTranspose, HalfBiasRoundsOnce) {
  double a = 1 + std::ldexp(1.0, -10);
  Tensor x = fromValues(DType::F16, {1, 1, 1, 1}, {a});
  Tensor w = fromValues(DType::F16, {1, 1, 1, 1}, {a});
  Tensor b = fromValues(DType::F16, {1}, {std::ldexp(1.0, -11)});
  Tensor y(DType::F16, {1, 1, 1, 1});
  run("graph.conv_transpose2d", {&x, &w, &b}, {&y});
  expectEqual(y, {1 + 3 * std::ldexp(1.0, -10)}, "y");
}

TEST(CpuConvTranspose, RejectsAMismatchedResult) {
  Operands o;
  Tensor y(DType::F32, {2, 6, 7, 5}); // 7 rows: no conv2d reads back to 3
  EXPECT_THROW(run("graph.conv_transpose2d", {&o.x, &o.w, &o.b}, {&y},
                   convAttrs(true)),
               std::exception);
}

} // namespace
} // namespace ampc::cpu::test
