//===- CpuLinalgTest.cpp - GEMM, conv, pool and attention kernels ---------===//
#include "test/unit/CpuKernelTestUtil.h"
#include "runtime/cpu/Common.h"
#include "runtime/numerics/Elementwise.h"

#include <limits>

namespace ampc::cpu::test {
namespace {

// GEMM-shaped results: f32 close to the double reference; f16/bf16 within
// one unit of the reference rounded to the type (FP32 accumulation).
void expectGemm(const Tensor &y, const std::vector<double> &ref,
                const std::string &what) {
  if (y.dtype == DType::F32) {
    expectClose(y, ref, 2e-5, 2e-5, what);
    return;
  }
  for (int64_t i = 0; i < y.numel(); ++i)
    EXPECT_LE(std::fabs(y.get(i) - roundTo(y.dtype, ref[i])), ulp(y.dtype, ref[i]))
        << what << " [" << i << "]";
}

TEST(CpuLinalg, MatmulBatchMatmulLinear) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(name(t));
    Tensor a = randomTensor(t, {5, 7}, 1), b = randomTensor(t, {7, 3}, 2), c(t, {5, 3});
    run("graph.matmul", {&a, &b}, {&c});
    std::vector<double> ref(15, 0.0);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 7; ++k) ref[i * 3 + j] += a.get(i * 7 + k) * b.get(k * 3 + j);
    expectGemm(c, ref, "matmul");

    Tensor ba = randomTensor(t, {2, 2, 3, 4}, 3), bb = randomTensor(t, {2, 2, 4, 5}, 4);
    Tensor bc(t, {2, 2, 3, 5});
    run("graph.batch_matmul", {&ba, &bb}, {&bc});
    std::vector<double> bref(60, 0.0);
    for (int z = 0; z < 4; ++z)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j)
          for (int k = 0; k < 4; ++k)
            bref[z * 15 + i * 5 + j] += ba.get(z * 12 + i * 4 + k) * bb.get(z * 20 + k * 5 + j);
    expectGemm(bc, bref, "batch_matmul");

    Tensor x = randomTensor(t, {2, 3, 6}, 5), w = randomTensor(t, {4, 6}, 6);
    Tensor bias = randomTensor(t, {4}, 7), y(t, {2, 3, 4}), y0(t, {2, 3, 4});
    run("graph.linear", {&x, &w, &bias}, {&y});
    run("graph.linear", {&x, &w}, {&y0});
    std::vector<double> lref(24), lref0(24);
    for (int r = 0; r < 6; ++r)
      for (int n = 0; n < 4; ++n) {
        double s = 0;
        for (int k = 0; k < 6; ++k) s += x.get(r * 6 + k) * w.get(n * 6 + k);
        lref0[r * 4 + n] = s;
        lref[r * 4 + n] = s + bias.get(n);
      }
    expectGemm(y, lref, "linear");
    expectGemm(y0, lref0, "linear without bias");
  }
}

// detail::sgemm clears C itself for beta == 0 and asks OpenBLAS for
// C += A B: NaN left in C must not survive, and the columns past n of a
// strided C (another matrix's) are not touched. Small integers, so every
// summation order gives the exact result.
TEST(CpuLinalg, SgemmBetaZeroClearsOnlyItsOutput) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string(ta ? "A^T" : "A") + (tb ? " B^T" : " B"));
      const int64_t m = 3, n = 4, k = 5, ldc = 6;
      std::vector<float> a(size_t(m * k)), b(size_t(k * n));
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = float(int(i % 7) - 3);
      for (size_t i = 0; i < b.size(); ++i)
        b[i] = float(int(i % 5) - 2);
      std::vector<float> c(size_t(m * ldc), nan);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = n; j < ldc; ++j)
          c[size_t(i * ldc + j)] = 42.0f;
      detail::sgemm(ta, tb, m, n, k, 2.0f, a.data(), ta ? m : k, b.data(),
                    tb ? k : n, 0.0f, c.data(), ldc);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float ref = 0.0f;
          for (int64_t p = 0; p < k; ++p)
            ref += a[size_t(ta ? p * m + i : i * k + p)] *
                   b[size_t(tb ? j * k + p : p * n + j)];
          EXPECT_EQ(c[size_t(i * ldc + j)], 2.0f * ref) << i << "," << j;
        }
        for (int64_t j = n; j < ldc; ++j)
          EXPECT_EQ(c[size_t(i * ldc + j)], 42.0f) << i << "," << j;
      }
    }
}

// graph.matmul_bias_grad is bitwise graph.matmul plus graph.reduce_sum of the
// lhs over K (the library calls it replaces), in both lhs layouts; a 3-D
// dY reduced over its leading axes gives the same bias gradient as its
// [rows, N] view over axis 0.
TEST(CpuLinalg, MatmulBiasGradIsMatmulPlusReduceSum) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(name(t));
    for (bool ta : {true, false}) {
      Tensor g = randomTensor(t, ta ? std::vector<int64_t>{24, 5}
                                    : std::vector<int64_t>{5, 24}, 11);
      Tensor x = randomTensor(t, {24, 3}, 12);
      Tensor dw(t, {5, 3}), db(t, {5}), w(t, {5, 3}), b(t, {5});
      Attrs flags;
      if (ta)
        flags.set("lhs_transposed", true);
      run("graph.matmul_bias_grad", {&g, &x}, {&dw, &db}, flags);
      run("graph.matmul", {&g, &x}, {&w}, flags);
      run("graph.reduce_sum", {&g}, {&b},
          Attrs{{"axes", std::vector<int64_t>{ta ? 0 : 1}}});
      EXPECT_EQ(dw.bytes, w.bytes) << "lhs_transposed " << ta;
      EXPECT_EQ(db.bytes, b.bytes) << "lhs_transposed " << ta;
      for (int64_t m = 0; m < 5; ++m) {
        double s = 0;
        for (int64_t k = 0; k < 24; ++k)
          s += g.get(ta ? k * 5 + m : m * 24 + k);
        // FP32 accumulation: f32 within its rounding of 24 terms, halves
        // within one unit of the exact sum rounded to the type.
        double tol = t == DType::F32 ? 2e-5 * (1 + std::fabs(s)) : ulp(t, s);
        EXPECT_LE(std::fabs(db.get(m) - roundTo(t, s)), tol) << m;
      }
    }
    Tensor g3 = randomTensor(t, {2, 12, 5}, 13), b3(t, {5});
    run("graph.reduce_sum", {&g3}, {&b3}, Attrs{{"axes", std::vector<int64_t>{0, 1}}});
    Tensor g2 = g3;
    g2.shape = {24, 5};
    Tensor x = randomTensor(t, {24, 3}, 12), dw(t, {5, 3}), db(t, {5});
    Attrs flags;
    flags.set("lhs_transposed", true);
    run("graph.matmul_bias_grad", {&g2, &x}, {&dw, &db}, flags);
    EXPECT_EQ(db.bytes, b3.bytes);
  }
}

// The same values as f32 (exact: every f16/bf16 value is a float).
Tensor widened(const Tensor &x) { return fromValues(DType::F32, x.shape, x.values()); }

// graph.linear_gelu: the preactivation is bitwise graph.linear's result;
// the GELU is taken of the FP32 z (the f32 linear of the same values) and
// rounded once. For f32 that is bitwise linear then gelu.
TEST(CpuLinalg, LinearGeluRoundsTheGeluOfTheFloatResultOnce) {
  Attrs tanh{{"approximate", "tanh"}};
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(name(t));
    for (bool bias : {true, false}) {
      Tensor x = randomTensor(t, {2, 3, 8}, 21), w = randomTensor(t, {5, 8}, 22);
      Tensor b = randomTensor(t, {5}, 23);
      std::vector<Tensor *> in{&x, &w};
      if (bias)
        in.push_back(&b);
      Tensor h(t, {2, 3, 5}), z(t, {2, 3, 5}), y(t, {2, 3, 5});
      run("graph.linear_gelu", in, {&h, &z});
      run("graph.linear", in, {&y});
      EXPECT_EQ(z.bytes, y.bytes) << "bias " << bias;
      Tensor xf = widened(x), wf = widened(w), bf = widened(b), zf(DType::F32, {2, 3, 5});
      std::vector<Tensor *> inf{&xf, &wf};
      if (bias)
        inf.push_back(&bf);
      run("graph.linear", inf, {&zf});
      for (int64_t i = 0; i < h.numel(); ++i)
        EXPECT_EQ(h.get(i), roundFromFloat(t, num::geluTanh(float(zf.get(i)))))
            << "bias " << bias << " [" << i << "]";
      if (t == DType::F32) {
        Tensor g(t, {2, 3, 5});
        run("graph.gelu", {&y}, {&g}, tanh);
        EXPECT_EQ(h.bytes, g.bytes) << "bias " << bias;
      }
    }
  }
}

// graph.matmul_gelu_backward: gelu'(preactivation) times the FP32 GEMM,
// rounded once, in both lhs layouts. For f32 that is bitwise matmul then
// gelu_backward.
TEST(CpuLinalg, MatmulGeluBackwardRoundsOnce) {
  Attrs tanh{{"approximate", "tanh"}};
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(name(t));
    for (bool ta : {true, false}) {
      Tensor a = randomTensor(t, ta ? std::vector<int64_t>{7, 6}
                                    : std::vector<int64_t>{6, 7}, 31);
      Tensor b = randomTensor(t, {7, 4}, 32), z = randomTensor(t, {6, 4}, 33);
      Attrs flags;
      if (ta)
        flags.set("lhs_transposed", true);
      Tensor d(t, {6, 4});
      run("graph.matmul_gelu_backward", {&a, &b, &z}, {&d}, flags);
      Tensor af = widened(a), bf = widened(b), cf(DType::F32, {6, 4});
      run("graph.matmul", {&af, &bf}, {&cf}, flags);
      for (int64_t i = 0; i < d.numel(); ++i)
        EXPECT_EQ(d.get(i), roundFromFloat(t, num::geluTanhGrad(
                                                  float(z.get(i)), float(cf.get(i)))))
            << "lhs_transposed " << ta << " [" << i << "]";
      if (t == DType::F32) {
        Tensor dz(t, {6, 4});
        run("graph.gelu_backward", {&z, &cf}, {&dz}, tanh);
        EXPECT_EQ(d.bytes, dz.bytes) << "lhs_transposed " << ta;
      }
    }
  }
}

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  int64_t oh() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  Attrs attrs() const {
    return Attrs{{"stride", {sh, sw}}, {"padding", {ph, pw}},
                 {"dilation", {dh, dw}}, {"groups", groups}};
  }
};

// Naive loops: y (with bias), and for cotangent g: dx and dw.
struct ConvRef {
  std::vector<double> y, dx, dw;
};
ConvRef convRef(const ConvCase &k, const Tensor &x, const Tensor &w,
                const Tensor *b, const Tensor &g) {
  int64_t cg = k.c / k.groups, og = k.o / k.groups, oh = k.oh(), ow = k.ow();
  ConvRef r{std::vector<double>(size_t(k.n * k.o * oh * ow), 0.0),
            std::vector<double>(size_t(x.numel()), 0.0),
            std::vector<double>(size_t(w.numel()), 0.0)};
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t yi = ((n * k.o + o) * oh + oy) * ow + ox;
          double s = b ? b->get(o) : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j) {
                int64_t iy = oy * k.sh - k.ph + i * k.dh, ix = ox * k.sw - k.pw + j * k.dw;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                int64_t xi = ((n * k.c + (o / og) * cg + c) * k.h + iy) * k.w + ix;
                int64_t wi = ((o * cg + c) * k.kh + i) * k.kw + j;
                s += x.get(xi) * w.get(wi);
                r.dx[xi] += g.get(yi) * w.get(wi);
                r.dw[wi] += g.get(yi) * x.get(xi);
              }
          r.y[yi] = s;
        }
  return r;
}

TEST(CpuConv, ForwardAndBackwardAgainstNaiveLoops) {
  const ConvCase cases[] = {
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1},
      {2, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2, 1, 1, 2},  // stride, padding, groups
      {1, 2, 10, 9, 2, 3, 3, 1, 2, 2, 1, 2, 2, 2}, // dilation, depthwise
      {3, 1, 5, 5, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1},  // 1x1
  };
  for (DType t : kFloatTypes)
    for (const ConvCase &k : cases) {
      SCOPED_TRACE(std::string(name(t)) + " groups=" + std::to_string(k.groups));
      Tensor x = randomTensor(t, {k.n, k.c, k.h, k.w}, 1);
      Tensor w = randomTensor(t, {k.o, k.c / k.groups, k.kh, k.kw}, 2);
      Tensor b = randomTensor(t, {k.o}, 3);
      Tensor g = randomTensor(t, {k.n, k.o, k.oh(), k.ow()}, 4);
      Tensor y(t, g.shape), dx(t, x.shape), dw(t, w.shape);
      run("graph.conv2d", {&x, &w, &b}, {&y}, k.attrs());
      run("graph.conv2d_backward_input", {&g, &w}, {&dx}, k.attrs());
      run("graph.conv2d_backward_weight", {&x, &g}, {&dw}, k.attrs());
      ConvRef r = convRef(k, x, w, &b, g);
      expectGemm(y, r.y, "conv2d");
      expectGemm(dx, r.dx, "conv2d_backward_input");
      expectGemm(dw, r.dw, "conv2d_backward_weight");
    }
}

TEST(CpuConv, DefaultsAndShapeErrors) {
  // No attributes: stride 1, padding 0, dilation 1, groups 1; no bias.
  ConvCase k{1, 2, 4, 4, 3, 3, 3, 1, 1, 0, 0, 1, 1, 1};
  Tensor x = randomTensor(DType::F32, {1, 2, 4, 4}, 5);
  Tensor w = randomTensor(DType::F32, {3, 2, 3, 3}, 6);
  Tensor g(DType::F32, {1, 3, 2, 2}), y(DType::F32, {1, 3, 2, 2});
  run("graph.conv2d", {&x, &w}, {&y});
  expectGemm(y, convRef(k, x, w, nullptr, g).y, "defaults");
  Tensor bad(DType::F32, {1, 3, 3, 3});
  EXPECT_THROW(run("graph.conv2d", {&x, &w}, {&bad}), std::invalid_argument);
}

std::vector<double> maxPoolRef(const Tensor &x, int64_t k, int64_t s, int64_t p,
                               int64_t oh, int64_t ow) {
  int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
  std::vector<double> y;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double m = -INFINITY;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < k; ++j) {
            int64_t iy = oy * s - p + i, ix = ox * s - p + j;
            if (iy >= 0 && iy < h && ix >= 0 && ix < w)
              m = std::max(m, x.get((pl * h + iy) * w + ix));
          }
        y.push_back(m);
      }
  return y;
}

TEST(CpuPool, MaxPoolForwardPaddingNeverWins) {
  for (DType t : kFloatTypes) {
    Tensor x = randomTensor(t, {2, 3, 7, 6}, 1, -5, -1); // all negative
    Tensor y(t, {2, 3, 7, 6});
    run("graph.max_pool2d", {&x}, {&y},
        Attrs{{"kernel_size", {3, 3}}, {"stride", {1, 1}}, {"padding", {1, 1}}});
    expectEqual(y, maxPoolRef(x, 3, 1, 1, 7, 6), name(t));
    Tensor y2(t, {2, 3, 3, 3}); // stride defaults to kernel_size
    run("graph.max_pool2d", {&x}, {&y2}, Attrs{{"kernel_size", {2, 2}}});
    expectEqual(y2, maxPoolRef(x, 2, 2, 0, 3, 3), name(t));
  }
}

TEST(CpuPool, MaxPoolBackwardTiesGoToTheFirstMaximum) {
  Tensor x = fromValues(DType::F32, {1, 1, 2, 4}, {1, 1, 2, 2, 1, 1, 2, 2});
  Tensor g = fromValues(DType::F32, {1, 1, 1, 2}, {3, 5}), dx(DType::F32, x.shape);
  run("graph.max_pool2d_backward", {&x, &g}, {&dx}, Attrs{{"kernel_size", {2, 2}}});
  expectEqual(dx, {3, 0, 5, 0, 0, 0, 0, 0}, "ties");
  // Overlapping windows accumulate: windows {0,1} and {1,2} of [1, 1, 1].
  Tensor x2 = fromValues(DType::BF16, {1, 1, 1, 3}, {1, 1, 1});
  Tensor g2 = fromValues(DType::BF16, {1, 1, 1, 2}, {2, 3}), d2(DType::BF16, x2.shape);
  run("graph.max_pool2d_backward", {&x2, &g2}, {&d2},
      Attrs{{"kernel_size", {1, 2}}, {"stride", {1, 1}}});
  expectEqual(d2, {2, 3, 0}, "overlap");
  // The later strict maximum wins over earlier ones.
  Tensor x3 = fromValues(DType::F16, {1, 1, 2, 2}, {1, 4, 4, 2});
  Tensor g3 = fromValues(DType::F16, {1, 1, 1, 1}, {7}), d3(DType::F16, x3.shape);
  run("graph.max_pool2d_backward", {&x3, &g3}, {&d3}, Attrs{{"kernel_size", {2, 2}}});
  expectEqual(d3, {0, 7, 0, 0}, "row-major first of the maxima");
}

TEST(CpuPool, AvgPoolCountsPaddingAndBackward) {
  Tensor x = fromValues(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4}), y(DType::F32, {1, 1, 3, 3});
  Attrs a{{"kernel_size", {2, 2}}, {"stride", {1, 1}}, {"padding", {1, 1}}};
  run("graph.avg_pool2d", {&x}, {&y}, a);
  expectEqual(y, {0.25, 0.75, 0.5, 1.0, 2.5, 1.5, 0.75, 1.75, 1.0}, "avg");
  Tensor g = fromValues(DType::F32, {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  Tensor dx(DType::F32, x.shape);
  run("graph.avg_pool2d_backward", {&g}, {&dx}, a);
  expectEqual(dx, {1, 1, 1, 1}, "avg backward");
  Tensor g2 = fromValues(DType::F16, {1, 1, 1, 1}, {2}), dx2(DType::F16, {1, 1, 2, 3});
  run("graph.avg_pool2d_backward", {&g2}, {&dx2}, Attrs{{"kernel_size", {2, 2}}});
  expectEqual(dx2, {0.5, 0.5, 0, 0.5, 0.5, 0}, "stride = kernel, remainder column");
}

// softmax(scale q k^T + mask) v per (batch, head), in double.
std::vector<double> attentionRef(const std::vector<double> &q, const std::vector<double> &k,
                                 const std::vector<double> &v, int64_t bh, int64_t t,
                                 int64_t s, int64_t d, int64_t e, bool causal, double scale) {
  std::vector<double> o(size_t(bh * t * e), 0.0);
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < t; ++i) {
      std::vector<double> sc(static_cast<size_t>(s));
      double mx = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += q[(b * t + i) * d + c] * k[(b * s + j) * d + c];
        sc[j] = causal && j > i ? -INFINITY : dot * scale;
        mx = std::max(mx, sc[j]);
      }
      double sum = 0;
      for (double &x : sc) sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < e; ++c)
          o[(b * t + i) * e + c] += sc[j] / sum * v[(b * s + j) * e + c];
    }
  return o;
}

TEST(CpuAttention, ForwardCausalAndScale) {
  for (DType t : kFloatTypes)
    for (bool causal : {false, true}) {
      SCOPED_TRACE(std::string(name(t)) + (causal ? " causal" : ""));
      int64_t T = 5, S = causal ? 5 : 6, D = 4, E = 3;
      Tensor q = randomTensor(t, {2, 2, T, D}, 1), k = randomTensor(t, {2, 2, S, D}, 2);
      Tensor v = randomTensor(t, {2, 2, S, E}, 3), o(t, {2, 2, T, E}), o2(t, {2, 2, T, E});
      Attrs a;
      if (causal) a.set("causal", true);
      run("graph.scaled_dot_product_attention", {&q, &k, &v}, {&o}, a);
      auto ref = attentionRef(q.values(), k.values(), v.values(), 4, T, S, D, E, causal, 0.5);
      expectGemm(o, ref, "default scale 1/sqrt(D)");
      a.set("scale", 0.3);
      run("graph.scaled_dot_product_attention", {&q, &k, &v}, {&o2}, a);
      expectGemm(o2, attentionRef(q.values(), k.values(), v.values(), 4, T, S, D, E, causal, 0.3),
                 "scale 0.3");
    }
}

TEST(CpuAttention, BackwardMatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    int64_t T = 3, S = causal ? 3 : 4, D = 2, E = 3;
    Tensor q = randomTensor(DType::F32, {1, 2, T, D}, 4), k = randomTensor(DType::F32, {1, 2, S, D}, 5);
    Tensor v = randomTensor(DType::F32, {1, 2, S, E}, 6), g = randomTensor(DType::F32, {1, 2, T, E}, 7);
    Tensor dq(DType::F32, q.shape), dk(DType::F32, k.shape), dv(DType::F32, v.shape);
    Attrs a{{"causal", causal}};
    run("graph.scaled_dot_product_attention_backward", {&q, &k, &v, &g}, {&dq, &dk, &dv}, a);
    double sc = 1 / std::sqrt(2.0);
    auto qv = q.values(), kv = k.values(), vv = v.values(), gv = g.values();
    expectClose(dq, numericVjp([&](auto &x) { return attentionRef(x, kv, vv, 2, T, S, D, E, causal, sc); }, qv, gv),
                1e-4, 1e-4, "dq");
    expectClose(dk, numericVjp([&](auto &x) { return attentionRef(qv, x, vv, 2, T, S, D, E, causal, sc); }, kv, gv),
                1e-4, 1e-4, "dk");
    expectClose(dv, numericVjp([&](auto &x) { return attentionRef(qv, kv, x, 2, T, S, D, E, causal, sc); }, vv, gv),
                1e-4, 1e-4, "dv");
  }
}

} // namespace
} // namespace ampc::cpu::test
