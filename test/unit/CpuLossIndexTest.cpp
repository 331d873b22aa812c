//===- CpuLossIndexTest.cpp - nll/bce, soft cross entropy, argmax... ------===//
//
// The CPU kernels against PyTorch's own float32 numbers: the expected values
// are printed by test/unit/loss_index_torch.py (torch.nn.functional, PyTorch
// 2.15) from the same inputs. Values that involve no rounding are asserted
// exactly; the losses with exp/log within 2e-7 relative (PyTorch sums in a
// different order and vectorizes log1p/exp).
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

#include <cmath>

namespace ampc::cpu::test {
namespace {

void expectNear(const Tensor &got, const std::vector<double> &ref,
                const char *what, double rel = 2e-7) {
  ASSERT_EQ(got.numel(), int64_t(ref.size())) << what;
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(got.get(int64_t(i)), ref[i],
                rel * std::max(1.0, std::fabs(ref[i])))
        << what << " element " << i;
}

Tensor ids(std::vector<int64_t> shape, const std::vector<double> &v) {
  return fromValues(DType::I64, std::move(shape), v);
}

TEST(CpuLossIndex, NllLossMatchesPyTorch) {
  Tensor lp = fromValues(DType::F32, {4, 3},
                         {-0.25, -1.5, -2.0, -3.0, -0.125, -4.5, -1.0, -0.75,
                          -0.5, -2.25, -5.0, -0.0625});
  Tensor y = ids({4}, {2, -100, 0, 1});
  Tensor s(DType::F32, {}), rows(DType::F32, {4});
  run("graph.nll_loss", {&lp, &y}, {&s});
  EXPECT_EQ(s.get(0), double(2.66666675f)); // 8 / 3 rows
  run("graph.nll_loss", {&lp, &y}, {&s}, Attrs{{"reduction", "sum"}});
  EXPECT_EQ(s.get(0), 8.0);
  run("graph.nll_loss", {&lp, &y}, {&rows}, Attrs{{"reduction", "none"}});
  expectEqual(rows, {2, 0, 1, 5}, "nll none");
  // Every row ignored: 0 / 0 = NaN, as PyTorch.
  Tensor all7 = ids({4}, {7, 7, 7, 7});
  run("graph.nll_loss", {&lp, &all7}, {&s}, Attrs{{"ignore_index", int64_t(7)}});
  EXPECT_TRUE(std::isnan(s.get(0)));
  // The gradient: -1/3 at each counted row's label.
  Tensor g = fromValues(DType::F32, {}, {1.0}), dx(DType::F32, {4, 3});
  run("graph.nll_loss_backward", {&y, &g}, {&dx});
  const double t = double(-0.333333343f);
  expectEqual(dx, {0, 0, t, 0, 0, 0, t, 0, 0, 0, t, 0}, "nll grad");
  Tensor bad = ids({4}, {2, 3, 0, 1});
  EXPECT_THROW(run("graph.nll_loss", {&lp, &bad}, {&s}), std::invalid_argument);
}

TEST(CpuLossIndex, BceWithLogitsMatchesPyTorch) {
  Tensor x = fromValues(DType::F32, {2, 3}, {0.5, -2.0, 30.0, -30.0, 0.0, 1.25});
  Tensor t = fromValues(DType::F32, {2, 3}, {1.0, 0.0, 0.25, 1.0, 0.5, 0.0});
  Tensor pw = fromValues(DType::F32, {3}, {2.0, 0.5, 3.0});
  Tensor s(DType::F32, {}), e(DType::F32, {2, 3});
  const char *op = "graph.binary_cross_entropy_with_logits";
  run(op, {&x, &t}, {&e}, Attrs{{"reduction", "none"}});
  expectNear(e, {0.474076986, 0.126928091, 22.5, 30, 0.693147182, 1.50192904},
             "bce none");
  run(op, {&x, &t}, {&s});
  expectNear(s, {9.21601391}, "bce mean");
  run(op, {&x, &t, &pw}, {&e}, Attrs{{"reduction", "none"}});
  expectNear(e, {0.948153973, 0.126928091, 22.5, 60, 0.519860387, 1.50192904},
             "bce pos_weight none");
  run(op, {&x, &t, &pw}, {&s}, Attrs{{"reduction", "sum"}});
  expectNear(s, {85.5968704}, "bce pos_weight sum");
  Tensor pw2 = fromValues(DType::F32, {2}, {1.0, 2.0});
  EXPECT_THROW(run(op, {&x, &t, &pw2}, {&s}), std::invalid_argument);
}

TEST(CpuLossIndex, SoftCrossEntropyMatchesPyTorch) {
  Tensor z = fromValues(DType::F32, {2, 3}, {1.0, 2.0, 0.5, -1.0, 0.0, 3.0});
  Tensor p = fromValues(DType::F32, {2, 3}, {0.25, 0.5, 0.25, 0.0, 0.125, 0.875});
  Tensor s(DType::F32, {});
  run("graph.cross_entropy", {&z, &p}, {&s});
  expectNear(s, {0.765126348}, "soft ce");
  run("graph.cross_entropy", {&z, &p}, {&s}, Attrs{{"label_smoothing", 0.2}});
  expectNear(s, {0.981793046}, "soft ce smoothing");
}

TEST(CpuLossIndex, ArgmaxGatherCumsumMatchPyTorch) {
  Tensor a = fromValues(DType::F32, {3, 4},
                        {1.0, 3.0, 3.0, -1.0, 2.0, 2.0, 0.5, 2.0, -4.0, -3.0,
                         -3.5, -3.0});
  Tensor i1(DType::I64, {3}), i0(DType::I64, {4});
  run("graph.argmax", {&a}, {&i1}, Attrs{{"axis", int64_t(1)}});
  expectEqual(i1, {1, 0, 1}, "argmax axis 1 (first of ties)");
  run("graph.argmax", {&a}, {&i0}, Attrs{{"axis", int64_t(0)}});
  expectEqual(i0, {1, 0, 0, 1}, "argmax axis 0");
  Tensor nan = fromValues(DType::F32, {3}, {1.0, NAN, 5.0}), in(DType::I64, {1});
  run("graph.argmax", {&nan}, {&in}, Attrs{{"axis", int64_t(-1)}});
  expectEqual(in, {1}, "argmax: NaN is the maximum");

  Tensor gi = ids({3, 2}, {3, 0, 1, 1, 2, 0}), gv(DType::F32, {3, 2});
  run("graph.gather", {&a, &gi}, {&gv}, Attrs{{"axis", int64_t(1)}});
  expectEqual(gv, {-1, 1, 2, 2, -3.5, -4}, "gather axis 1");
  // Backward: row 1 picks column 1 twice, so it gets both cotangents.
  Tensor g = fromValues(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}),
         dx(DType::F32, {3, 4});
  run("graph.gather_backward", {&gi, &g}, {&dx}, Attrs{{"axis", int64_t(1)}});
  expectEqual(dx, {2, 0, 0, 1, 0, 7, 0, 0, 6, 0, 5, 0}, "gather backward");
  Tensor far = ids({3, 2}, {4, 0, 1, 1, 2, 0});
  EXPECT_THROW(run("graph.gather", {&a, &far}, {&gv}, Attrs{{"axis", int64_t(1)}}),
               std::invalid_argument);

  Tensor c(DType::F32, {3, 4});
  run("graph.cumsum", {&a}, {&c}, Attrs{{"axis", int64_t(1)}});
  expectEqual(c, {1, 4, 7, 6, 2, 4, 4.5, 6.5, -4, -7, -10.5, -13.5},
              "cumsum axis 1");
  run("graph.cumsum", {&a}, {&c}, Attrs{{"axis", int64_t(0)}});
  expectEqual(c, {1, 3, 3, -1, 3, 5, 3.5, 1, -1, 2, 0, -2}, "cumsum axis 0");
  run("graph.cumsum", {&a}, {&c},
      Attrs{{"axis", int64_t(1)}, {"reverse", true}});
  expectEqual(c, {6, 5, 2, -1, 6.5, 4.5, 2.5, 2, -13.5, -9.5, -6.5, -3},
              "cumsum reverse");
}

// fp16 results are rounded once from the float running sum (a sum kept in
// fp16 would give 1000.5 + 0.125 -> 1000.5 for the last one).
TEST(CpuLossIndex, HalfResultsRoundOnce) {
  Tensor x = fromValues(DType::F16, {4}, {1000.0, 0.5, 0.25, 0.125});
  Tensor c(DType::F16, {4});
  run("graph.cumsum", {&x}, {&c}, Attrs{{"axis", int64_t(0)}});
  expectEqual(c, {1000, 1000.5, roundTo(DType::F16, 1000.75),
                  roundTo(DType::F16, 1000.875)},
              "cumsum f16");
}

} // namespace
} // namespace ampc::cpu::test
