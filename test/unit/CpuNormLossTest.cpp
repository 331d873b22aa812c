//===- CpuNormLossTest.cpp - norm, softmax, reduce, loss, shape kernels ---===//
#include "test/unit/CpuKernelTestUtil.h"

#include <bit>

namespace ampc::cpu::test {
namespace {

std::vector<double> layerNormRef(const std::vector<double> &x, const std::vector<double> &w,
                                 const std::vector<double> &b, int64_t d, double eps, bool rms) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / size_t(d); ++r) {
    const double *p = x.data() + r * d;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += p[j] / double(d);
    for (int64_t j = 0; j < d; ++j)
      var += rms ? p[j] * p[j] / double(d) : (p[j] - mean) * (p[j] - mean) / double(d);
    for (int64_t j = 0; j < d; ++j)
      y[r * d + j] = (rms ? p[j] : p[j] - mean) / std::sqrt(var + eps) * w[j] + (rms ? 0 : b[j]);
  }
  return y;
}

TEST(CpuNorm, SoftmaxAndLogSoftmaxOnAnyAxis) {
  for (DType t : kFloatTypes)
    for (int64_t axis : {-1, 1, 0}) {
      Tensor x = randomTensor(t, {3, 4, 5}, 1, -4, 4), y(t, x.shape), ly(t, x.shape);
      run("graph.softmax", {&x}, {&y}, Attrs{{"axis", axis}});
      run("graph.log_softmax", {&x}, {&ly}, Attrs{{"axis", axis}});
      int64_t ax = axis < 0 ? axis + 3 : axis;
      int64_t dims[3] = {3, 4, 5}, stride = ax == 2 ? 1 : ax == 1 ? 5 : 20;
      std::vector<double> ref(60), lref(60);
      for (int64_t i = 0; i < 60; ++i) {
        int64_t pos = (i / stride) % dims[ax], base = i - pos * stride;
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < dims[ax]; ++j) mx = std::max(mx, x.get(base + j * stride));
        for (int64_t j = 0; j < dims[ax]; ++j) s += std::exp(x.get(base + j * stride) - mx);
        ref[i] = std::exp(x.get(i) - mx) / s;
        lref[i] = x.get(i) - mx - std::log(s);
      }
      double tol = t == DType::F32 ? 1e-6 : 0;
      for (int64_t i = 0; i < 60; ++i) {
        EXPECT_LE(std::fabs(y.get(i) - ref[i]), tol + ulp(t, ref[i])) << name(t) << " " << i;
        EXPECT_LE(std::fabs(ly.get(i) - lref[i]), 4 * tol + ulp(t, lref[i])) << name(t) << " " << i;
      }
    }
}

TEST(CpuNorm, LayerNormAndRmsNormForward) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(name(t));
    Tensor x = randomTensor(t, {2, 3, 16}, 1), w = randomTensor(t, {16}, 2), b = randomTensor(t, {16}, 3);
    Tensor y(t, x.shape), yn(t, x.shape), yb(t, x.shape), r(t, x.shape), rn(t, x.shape);
    run("graph.layer_norm", {&x, &w, &b}, {&y}); // eps defaults to 1e-5
    run("graph.layer_norm", {&x}, {&yn}, Attrs{{"eps", 1e-3}});
    run("graph.layer_norm", {&x, nullptr, &b}, {&yb});
    run("graph.rms_norm", {&x, &w}, {&r}); // eps defaults to finfo(t).eps
    run("graph.rms_norm", {&x}, {&rn}, Attrs{{"eps", 0.5}});
    std::vector<double> ones(16, 1.0), zeros(16, 0.0);
    double abs = t == DType::F32 ? 2e-6 : 0;
    auto check = [&](const Tensor &got, const std::vector<double> &ref, const char *what) {
      for (int64_t i = 0; i < got.numel(); ++i)
        EXPECT_LE(std::fabs(got.get(i) - ref[i]), abs + 4 * ulp(DType::F32, ref[i]) +
                  (t == DType::F32 ? 0 : ulp(t, ref[i]))) << what << " " << i;
    };
    check(y, layerNormRef(x.values(), w.values(), b.values(), 16, 1e-5, false), "layer_norm");
    check(yn, layerNormRef(x.values(), ones, zeros, 16, 1e-3, false), "layer_norm no affine");
    check(yb, layerNormRef(x.values(), ones, b.values(), 16, 1e-5, false), "layer_norm bias only");
    check(r, layerNormRef(x.values(), w.values(), zeros, 16, kernels::machineEpsilon(t), true),
          "rms_norm");
    check(rn, layerNormRef(x.values(), ones, zeros, 16, 0.5, true), "rms_norm eps");
  }
}

// rms_norm's default eps is torch.finfo(dtype).eps (torch.nn.RMSNorm).
TEST(CpuNorm, RmsNormDefaultEpsIsMachineEpsilon) {
  EXPECT_EQ(kernels::machineEpsilon(DType::F32), 1.1920928955078125e-07);
  EXPECT_EQ(kernels::machineEpsilon(DType::F16), 0.0009765625);
  EXPECT_EQ(kernels::machineEpsilon(DType::BF16), 0.0078125);
}

TEST(CpuNorm, BackwardMatchesFiniteDifferences) {
  for (bool rms : {false, true}) {
    SCOPED_TRACE(rms ? "rms_norm" : "layer_norm");
    int64_t d = 6;
    Tensor x = randomTensor(DType::F32, {3, d}, 1), w = randomTensor(DType::F32, {d}, 2);
    Tensor g = randomTensor(DType::F32, {3, d}, 3), dx(DType::F32, x.shape);
    Tensor dw(DType::F32, {d}), db(DType::F32, {d});
    double eps = rms ? 1e-6 : 1e-5;
    if (rms)
      run("graph.rms_norm_backward", {&x, &w, &g}, {&dx, &dw});
    else
      run("graph.layer_norm_backward", {&x, &w, &g}, {&dx, &dw, &db});
    auto xv = x.values(), wv = w.values(), gv = g.values();
    std::vector<double> bv(size_t(d), 0.25);
    expectClose(dx, numericVjp([&](auto &v) { return layerNormRef(v, wv, bv, d, eps, rms); }, xv, gv),
                1e-4, 1e-4, "dx");
    expectClose(dw, numericVjp([&](auto &v) { return layerNormRef(xv, v, bv, d, eps, rms); }, wv, gv),
                1e-4, 1e-4, "dweight");
    if (!rms)
      expectClose(db, numericVjp([&](auto &v) { return layerNormRef(xv, wv, v, d, eps, rms); }, bv, gv),
                  1e-4, 1e-4, "dbias");
  }
  // Unused results may be left out (null data); bf16 results round once.
  Tensor x = randomTensor(DType::BF16, {2, 4}, 4), w = randomTensor(DType::BF16, {4}, 5);
  Tensor g = randomTensor(DType::BF16, {2, 4}, 6), dx(DType::BF16, {2, 4});
  run("graph.layer_norm_backward", {&x, &w, &g}, {&dx, nullptr, nullptr});
  EXPECT_NE(dx.values(), std::vector<double>(8, 0.0));
}

TEST(CpuReduce, SumMeanMaxOverAxes) {
  for (DType t : kFloatTypes) {
    Tensor x = randomTensor(t, {2, 3, 4}, 1);
    struct Case {
      std::vector<int64_t> axes;
      bool keepdim;
      std::vector<int64_t> out;
    } cases[] = {{{}, false, {}}, {{1}, false, {2, 4}}, {{-1, 0}, true, {1, 3, 1}},
                 {{0, 1, 2}, false, {}}, {{2}, true, {2, 3, 1}}};
    for (const Case &c : cases) {
      Attrs a{{"keepdim", c.keepdim}};
      if (!c.axes.empty()) a.set("axes", c.axes);
      Tensor s(t, c.out), m(t, c.out), mx(t, c.out);
      run("graph.reduce_sum", {&x}, {&s}, a);
      run("graph.reduce_mean", {&x}, {&m}, a);
      run("graph.reduce_max", {&x}, {&mx}, a);
      bool red[3] = {c.axes.empty(), c.axes.empty(), c.axes.empty()};
      for (int64_t ax : c.axes) red[ax < 0 ? ax + 3 : ax] = true;
      std::vector<double> sum(size_t(s.numel()), 0.0), cnt(sum.size(), 0.0), best(sum.size(), -INFINITY);
      for (int64_t i = 0; i < 24; ++i) {
        int64_t idx[3] = {i / 12, (i / 4) % 3, i % 4}, o = 0;
        int64_t dims[3] = {2, 3, 4};
        for (int dd = 0; dd < 3; ++dd)
          if (!red[dd]) o = o * dims[dd] + idx[dd];
        sum[o] += x.get(i);
        cnt[o] += 1;
        best[o] = std::max(best[o], x.get(i));
      }
      std::vector<double> mean(sum.size());
      for (size_t o = 0; o < sum.size(); ++o) mean[o] = sum[o] / cnt[o];
      expectEqual(mx, best, "reduce_max");
      for (int64_t o = 0; o < s.numel(); ++o) {
        EXPECT_LE(std::fabs(s.get(o) - sum[o]), 1e-5 + ulp(t, sum[o])) << name(t);
        EXPECT_LE(std::fabs(m.get(o) - mean[o]), 1e-6 + ulp(t, mean[o])) << name(t);
      }
    }
  }
  // Sums accumulate in float: 4096 halves of 1 sum to 4096 (not 2048).
  Tensor ones = fromValues(DType::F16, {4096}, std::vector<double>(4096, 1.0)), s(DType::F16, {});
  run("graph.reduce_sum", {&ones}, {&s});
  EXPECT_EQ(s.get(0), 4096.0);
}

TEST(CpuReduce, MaxBackwardSharesAmongTies) {
  Tensor x = fromValues(DType::F32, {2, 3}, {1, 3, 3, 5, 2, 5});
  Tensor g = fromValues(DType::F32, {2}, {6, 1}), dx(DType::F32, {2, 3});
  run("graph.reduce_max_backward", {&x, &g}, {&dx}, Attrs{{"axes", {1}}});
  expectEqual(dx, {0, 3, 3, 0.5, 0, 0.5}, "ties");
  Tensor gk = fromValues(DType::F16, {1, 3}, {4, 2, 9}), xk = fromValues(DType::F16, {2, 3}, {1, 2, 3, 1, 0, 4});
  Tensor dk(DType::F16, {2, 3});
  run("graph.reduce_max_backward", {&xk, &gk}, {&dk}, Attrs{{"axes", {0}}, {"keepdim", true}});
  expectEqual(dk, {2, 2, 0, 2, 0, 9}, "keepdim");
  Tensor ga = fromValues(DType::F32, {}, {3}), da(DType::F32, {2, 3});
  run("graph.reduce_max_backward", {&x, &ga}, {&da});
  expectEqual(da, {0, 0, 0, 1.5, 0, 1.5}, "all axes");
}

TEST(CpuLoss, CrossEntropyIgnoreIndexAndLabelSmoothing) {
  // Two classes of equal logits: log p = -ln 2 everywhere.
  Tensor z = fromValues(DType::F32, {3, 2}, {0, 0, 1, 1, 5, -5});
  Tensor y = fromValues(DType::I64, {3}, {1, 0, -100}), l(DType::F32, {});
  run("graph.cross_entropy", {&z, &y}, {&l});
  EXPECT_FLOAT_EQ(l.get(0), std::log(2.0)); // the ignored row is not counted
  // Hand values: logits [0, ln 3] -> p = [1/4, 3/4]; label 0, ignore_index 7,
  // smoothing 0.2: (0.8 * ln 4) + 0.1 * (ln 4 + ln 4/3).
  Tensor z2 = fromValues(DType::F32, {2, 2}, {0, std::log(3.0), 9, 9});
  Tensor y2 = fromValues(DType::I32, {2}, {0, 7}), l2(DType::F32, {});
  Attrs a{{"ignore_index", 7}, {"label_smoothing", 0.2}};
  run("graph.cross_entropy", {&z2, &y2}, {&l2}, a);
  double want = 0.8 * std::log(4.0) + 0.1 * (std::log(4.0) + std::log(4.0 / 3.0));
  EXPECT_NEAR(l2.get(0), want, 1e-6);
  // Its gradient: g/n * (p - 0.8 onehot - 0.1), zero on the ignored row.
  Tensor g = fromValues(DType::F32, {}, {2}), dz(DType::F32, {2, 2});
  run("graph.cross_entropy_backward", {&z2, &y2, &g}, {&dz}, a);
  expectClose(dz, {2 * (0.25 - 0.8 - 0.1), 2 * (0.75 - 0.1), 0, 0}, 1e-6, 0, "dlogits");
  // 3-D logits (classes last), f16, against the double formula.
  Tensor z3 = randomTensor(DType::F16, {2, 3, 5}, 4, -3, 3), l3(DType::F16, {});
  Tensor y3 = fromValues(DType::I64, {2, 3}, {0, 4, -100, 2, 2, 1});
  run("graph.cross_entropy", {&z3, &y3}, {&l3}, Attrs{{"label_smoothing", 0.1}});
  auto lossOf = [&](const std::vector<double> &zv) {
    double nll = 0, smooth = 0, n = 0;
    for (int r = 0; r < 6; ++r) {
      int64_t lab = int64_t(y3.get(r));
      if (lab == -100) continue;
      double mx = -INFINITY, s = 0;
      for (int j = 0; j < 5; ++j) mx = std::max(mx, zv[r * 5 + j]);
      for (int j = 0; j < 5; ++j) s += std::exp(zv[r * 5 + j] - mx);
      double lse = mx + std::log(s);
      nll -= zv[r * 5 + lab] - lse;
      for (int j = 0; j < 5; ++j) smooth -= zv[r * 5 + j] - lse;
      n += 1;
    }
    return std::vector<double>{0.9 * nll / n + 0.1 / 5 * smooth / n};
  };
  double ref = lossOf(z3.values())[0];
  EXPECT_LE(std::fabs(l3.get(0) - ref), ulp(DType::F16, ref));
  Tensor g3 = fromValues(DType::F32, {}, {1.5}), z3f(DType::F32, z3.shape), dz3(DType::F32, z3.shape);
  run("graph.cast", {&z3}, {&z3f});
  run("graph.cross_entropy_backward", {&z3f, &y3, &g3}, {&dz3}, Attrs{{"label_smoothing", 0.1}});
  expectClose(dz3, numericVjp(lossOf, z3.values(), {1.5}), 1e-5, 1e-4, "dlogits 3-D");
  // All rows ignored: NaN, as in PyTorch.
  Tensor yi = fromValues(DType::I64, {3}, {-100, -100, -100}), li(DType::F32, {});
  run("graph.cross_entropy", {&z, &yi}, {&li});
  EXPECT_TRUE(std::isnan(li.get(0)));
  Tensor yb = fromValues(DType::I64, {3}, {0, 2, 1});
  EXPECT_THROW(run("graph.cross_entropy", {&z, &yb}, {&l}), std::invalid_argument);
}

TEST(CpuLoss, MseLoss) {
  Tensor a = fromValues(DType::BF16, {2, 2}, {1, 2, 3, 4}), b = fromValues(DType::BF16, {2, 2}, {0, 2, 5, 4});
  Tensor l(DType::BF16, {});
  run("graph.mse_loss", {&a, &b}, {&l});
  EXPECT_EQ(l.get(0), 1.25);
}

TEST(CpuShape, ReshapeTransposeSliceConcatBroadcast) {
  Tensor x = randomTensor(DType::F16, {2, 3, 4}, 1);
  Tensor r(DType::F16, {4, 6});
  run("graph.reshape", {&x}, {&r});
  EXPECT_EQ(r.bytes, x.bytes);
  Tensor t(DType::F16, {4, 2, 3});
  run("graph.transpose", {&x}, {&t}, Attrs{{"perm", {2, 0, 1}}});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(t.bits((k * 2 + i) * 3 + j), x.bits((i * 3 + j) * 4 + k));
  Tensor s(DType::F16, {2, 1, 2});
  Attrs sa{{"starts", {0, 1, 0}}, {"limits", {2, 3, 4}}, {"strides", {1, 2, 3}}};
  run("graph.slice", {&x}, {&s}, sa);
  std::vector<double> sref;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k : {0, 3}) sref.push_back(x.get((i * 3 + 1) * 4 + k));
  expectEqual(s, sref, "slice");
  Tensor dx(DType::F16, {2, 3, 4});
  run("graph.slice_backward", {&s}, {&dx}, sa);
  for (int64_t i = 0; i < 24; ++i) {
    bool in = (i / 4) % 3 == 1 && (i % 4 == 0 || i % 4 == 3);
    EXPECT_EQ(dx.get(i), in ? x.get(i) : 0.0) << i;
  }
  Tensor a = fromValues(DType::I64, {2, 1}, {1, 2}), b = fromValues(DType::I64, {2, 2}, {3, 4, 5, 6});
  Tensor c(DType::I64, {2, 3});
  run("graph.concat", {&a, &b}, {&c}, Attrs{{"axis", -1}});
  expectEqual(c, {1, 3, 4, 2, 5, 6}, "concat");
  Tensor v = fromValues(DType::BF16, {3, 1}, {1, 2, 3}), bc(DType::BF16, {2, 3, 2});
  run("graph.broadcast_to", {&v}, {&bc});
  expectEqual(bc, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, "broadcast_to");
}

TEST(CpuShape, EmbeddingAndBackward) {
  Tensor table = randomTensor(DType::BF16, {5, 3}, 1);
  Tensor ids = fromValues(DType::I32, {2, 2}, {4, 0, 4, 2}), e(DType::BF16, {2, 2, 3});
  run("graph.embedding", {&ids, &table}, {&e});
  int rows[] = {4, 0, 4, 2};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(e.get(i * 3 + j), table.get(rows[i] * 3 + j));
  Tensor g = fromValues(DType::F32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 0.5, 0.5, 0.5, 7, 8, 9});
  Tensor dt(DType::F32, {5, 3});
  run("graph.embedding_backward", {&ids, &g}, {&dt});
  expectEqual(dt, {4, 5, 6, 0, 0, 0, 7, 8, 9, 0, 0, 0, 1.5, 2.5, 3.5}, "scatter-add");
  Tensor bad = fromValues(DType::I64, {1}, {5}), eb(DType::BF16, {1, 3});
  EXPECT_THROW(run("graph.embedding", {&bad, &table}, {&eb}), std::invalid_argument);
}

// With init (a tied table's other gradient): bitwise the scatter-add plus
// init widened, as graph.add computed it; a row no id names is init + 0, so
// a -0.0 there becomes +0.0 as it did.
TEST(CpuShape, EmbeddingBackwardWithInitIsTheAdd) {
  Tensor ids = fromValues(DType::I32, {2, 2}, {4, 0, 4, 2});
  Tensor g = randomTensor(DType::F32, {2, 2, 3}, 7);
  for (DType t : {DType::BF16, DType::F16, DType::F32}) {
    SCOPED_TRACE(name(t));
    Tensor init = randomTensor(t, {5, 3}, 8);
    init.set(3 * 3 + 1, -0.0); // row 3: no id names it
    Tensor dt(DType::F32, {5, 3}), plain(DType::F32, {5, 3});
    run("graph.embedding_backward", {&ids, &g, &init}, {&dt});
    run("graph.embedding_backward", {&ids, &g}, {&plain});
    for (int64_t i = 0; i < 15; ++i) {
      float want = float(plain.get(i)) + float(init.get(i));
      EXPECT_EQ(dt.bits(i), std::bit_cast<uint32_t>(want)) << i;
    }
    EXPECT_FALSE(std::signbit(dt.get(3 * 3 + 1)));
  }
  Tensor half(DType::BF16, {5, 3}), init = randomTensor(DType::F32, {5, 3}, 9);
  EXPECT_THROW(run("graph.embedding_backward", {&ids, &g, &init}, {&half}),
               std::invalid_argument);
}

} // namespace
} // namespace ampc::cpu::test
