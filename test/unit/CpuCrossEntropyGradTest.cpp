//===- CpuCrossEntropyGradTest.cpp - The loss and its gradient in one pass ===//
//
// graph.cross_entropy_with_grad gives the bits of the two ops
// graph-fuse-cross-entropy replaces, cross_entropy and cross_entropy_
// backward, also when dlogits is the logits' own buffer (the memory plan
// writes it over them).
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

// Labels [rows] in [0, classes), every third one |ignore| when given.
Tensor labels(DType t, int64_t rows, int64_t classes, int64_t ignore) {
  Tensor y(t, {rows});
  for (int64_t r = 0; r < rows; ++r)
    y.set(r, r % 3 == 1 && ignore != 12345 ? ignore : (r * 7 + 2) % classes);
  return y;
}

struct Case {
  DType logits, dlogits, labels;
  int64_t ignore;
  double smoothing;
};

TEST(CpuCrossEntropyGrad, IsTheLossAndTheBackward) {
  // 2 x 5 rows of 37 classes (not a multiple of 8); g a loss scale.
  const Case cases[] = {
      {DType::F32, DType::F32, DType::I64, -100, 0.0},
      {DType::BF16, DType::BF16, DType::I64, -100, 0.0},
      {DType::F16, DType::F16, DType::I32, 5, 0.1},
      {DType::BF16, DType::F32, DType::I64, 0, 0.25},
      {DType::F32, DType::BF16, DType::I32, 12345, 0.0},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(name(c.logits)) + " -> " + name(c.dlogits) +
                 " ignore " + std::to_string(c.ignore) + " smoothing " +
                 std::to_string(c.smoothing));
    Tensor z = randomTensor(c.logits, {2, 5, 37}, 11, -6, 6);
    Tensor y = labels(c.labels, 10, 37, c.ignore);
    y.shape = {2, 5};
    Tensor g = fromValues(DType::F32, {}, {65536.0});
    Attrs attrs{{"ignore_index", c.ignore},
                {"label_smoothing", c.smoothing}};
    Tensor loss(DType::F32, {}), dz(c.dlogits, {2, 5, 37});
    run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&loss, &dz}, attrs);
    Tensor refLoss(DType::F32, {}), refDz(c.dlogits, {2, 5, 37});
    run("graph.cross_entropy", {&z, &y}, {&refLoss}, attrs);
    run("graph.cross_entropy_backward", {&z, &y, &g}, {&refDz}, attrs);
    expectSameBits(loss, refLoss, "loss");
    expectSameBits(dz, refDz, "dlogits");
    if (c.ignore == 5) // ignored rows get a zero gradient
      for (int64_t j = 0; j < 37; ++j)
        EXPECT_EQ(dz.get(1 * 37 + j), 0.0);
  }
}

TEST(CpuCrossEntropyGrad, WritesTheGradientOverTheLogits) {
  // dlogits in the logits' buffer (f32 and bf16, with an ignored row and
  // smoothing): the same bits as into a buffer of its own.
  for (DType t : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(name(t));
    Tensor z = randomTensor(t, {9, 50}, 12, -8, 8);
    Tensor y = labels(DType::I64, 9, 50, -100);
    Tensor g = fromValues(DType::F32, {}, {1024.0});
    Attrs attrs{{"ignore_index", int64_t(-100)}, {"label_smoothing", 0.1}};
    Tensor refLoss(DType::F32, {}), refDz(t, {9, 50});
    run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&refLoss, &refDz},
        attrs);
    Tensor loss(DType::F32, {});
    run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&loss, &z}, attrs);
    expectSameBits(loss, refLoss, "loss");
    expectSameBits(z, refDz, "dlogits over the logits");
  }
}

TEST(CpuCrossEntropyGrad, Values) {
  // Two rows of two equal logits, labels 0 and 1, g = 4: loss = log 2,
  // dlogits = 4 / 2 * (0.5 - onehot) = -1 at the label, +1 elsewhere.
  Tensor z = fromValues(DType::F32, {2, 2}, {3, 3, -1, -1});
  Tensor y = fromValues(DType::I64, {2}, {0, 1});
  Tensor g = fromValues(DType::F32, {}, {4});
  Tensor loss(DType::F32, {}), dz(DType::F32, {2, 2});
  run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&loss, &dz});
  EXPECT_FLOAT_EQ(float(loss.get(0)), std::log(2.0f));
  EXPECT_EQ(dz.values(), (std::vector<double>{-1, 1, 1, -1}));
}

TEST(CpuCrossEntropyGrad, RejectsBadShapesAndLabels) {
  Tensor z(DType::F32, {4, 10}), g = fromValues(DType::F32, {}, {1});
  Tensor y = fromValues(DType::I64, {4}, {0, 1, 2, 10}); // 10: out of range
  Tensor loss(DType::F32, {}), dz(DType::F32, {4, 10}), bad(DType::F32, {4, 9});
  EXPECT_THROW(run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&loss, &dz}),
               std::exception);
  y.set(3, 9);
  EXPECT_THROW(run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&loss, &bad}),
               std::exception);
  EXPECT_NO_THROW(
      run("graph.cross_entropy_with_grad", {&z, &y, &g}, {&loss, &dz}));
}

} // namespace
} // namespace ampc::cpu::test
