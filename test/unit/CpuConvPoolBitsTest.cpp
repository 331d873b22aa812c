//===- CpuConvPoolBitsTest.cpp - conv, pool and sum kernels, to the bit ---===//
//
// conv2d and its backward ops, max pooling and its backward, and reduce_sum
// over trailing dimensions run faster loops than the simple ones they
// replaced (interior runs in im2col/col2im, vectorized 2x2 pooling,
// interleaved sums), with the same float operations in the same order. These
// tests keep the simple loops as references and compare every result bit:
// padding, stride, dilation, groups, windows at the borders, NaN and signed
// zeros in the windows.
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

#include <cblas.h>

#include <algorithm>
#include <limits>

namespace ampc::cpu::test {
namespace {

// Element i of a float tensor as float (exact: every element type widens).
std::vector<float> widened(const Tensor &t) {
  std::vector<float> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[size_t(i)] = float(t.get(i));
  return v;
}

// The float results rounded once to t's type, as bits of a tensor like t.
Tensor rounded(const Tensor &like, const std::vector<float> &v) {
  Tensor r(like.dtype, like.shape);
  for (int64_t i = 0; i < r.numel(); ++i)
    r.set(i, roundFromFloat(like.dtype, v[size_t(i)]));
  return r;
}

void expectSameBits(const Tensor &got, const Tensor &want,
                    const std::string &what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i)
    if (got.bits(i) != want.bits(i)) {
      ADD_FAILURE() << what << " [" << i << "]: got " << got.get(i)
                    << ", want " << want.get(i) << " (bits differ)";
      ++bad;
    }
}

void sgemmRef(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
              const float *a, int64_t lda, const float *b, int64_t ldb,
              float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0f, a,
              int(lda), b, int(ldb), beta, c, int(ldc));
}

struct Conv {
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  int64_t oh() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  int64_t cg() const { return c / groups; }
  int64_t og() const { return o / groups; }
  int64_t rows() const { return cg() * kh * kw; }
  int64_t cols() const { return oh() * ow(); }
  Attrs attrs() const {
    return Attrs{{"stride", {sh, sw}}, {"padding", {ph, pw}},
                 {"dilation", {dh, dw}}, {"groups", groups}};
  }
};

// The previous im2col: a bounds test per element.
void im2colRef(const Conv &g, const float *x, float *col) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        float *row = col + ((c * g.kh + i) * g.kw + j) * g.cols();
        for (int64_t oy = 0; oy < g.oh(); ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          for (int64_t ox = 0; ox < g.ow(); ++ox) {
            int64_t ix = ox * g.sw - g.pw + j * g.dw;
            row[oy * g.ow() + ox] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w
                                        ? x[(c * g.h + iy) * g.w + ix]
                                        : 0.0f;
          }
        }
      }
}

// The previous col2im.
void col2imRef(const Conv &g, const float *col, float *x) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const float *row = col + ((c * g.kh + i) * g.kw + j) * g.cols();
        for (int64_t oy = 0; oy < g.oh(); ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h)
            continue;
          for (int64_t ox = 0; ox < g.ow(); ++ox) {
            int64_t ix = ox * g.sw - g.pw + j * g.dw;
            if (ix >= 0 && ix < g.w)
              x[(c * g.h + iy) * g.w + ix] += row[oy * g.ow() + ox];
          }
        }
      }
}

// The previous conv2d: im2col + GEMM per image and group, then the bias.
std::vector<float> convRef(const Conv &g, const std::vector<float> &x,
                           const std::vector<float> &w,
                           const std::vector<float> *b) {
  std::vector<float> y(size_t(g.n * g.o * g.cols())), col(size_t(g.rows() * g.cols()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2colRef(g, x.data() + (n * g.c + gr * g.cg()) * g.h * g.w, col.data());
      sgemmRef(false, false, g.og(), g.cols(), g.rows(),
               w.data() + gr * g.og() * g.rows(), g.rows(), col.data(),
               g.cols(), 0.0f, y.data() + (n * g.o + gr * g.og()) * g.cols(),
               g.cols());
    }
  if (b)
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t o = 0; o < g.o; ++o)
        for (int64_t i = 0; i < g.cols(); ++i)
          y[size_t((n * g.o + o) * g.cols() + i)] += (*b)[size_t(o)];
  return y;
}

std::vector<float> convBackwardInputRef(const Conv &g,
                                        const std::vector<float> &gy,
                                        const std::vector<float> &w) {
  std::vector<float> dx(size_t(g.n * g.c * g.h * g.w), 0.0f),
      col(size_t(g.rows() * g.cols()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      sgemmRef(true, false, g.rows(), g.cols(), g.og(),
               w.data() + gr * g.og() * g.rows(), g.rows(),
               gy.data() + (n * g.o + gr * g.og()) * g.cols(), g.cols(), 0.0f,
               col.data(), g.cols());
      col2imRef(g, col.data(), dx.data() + (n * g.c + gr * g.cg()) * g.h * g.w);
    }
  return dx;
}

std::vector<float> convBackwardWeightRef(const Conv &g,
                                         const std::vector<float> &x,
                                         const std::vector<float> &gy) {
  std::vector<float> dw(size_t(g.o * g.rows()), 0.0f),
      col(size_t(g.rows() * g.cols()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2colRef(g, x.data() + (n * g.c + gr * g.cg()) * g.h * g.w, col.data());
      sgemmRef(false, true, g.og(), g.rows(), g.cols(),
               gy.data() + (n * g.o + gr * g.og()) * g.cols(), g.cols(),
               col.data(), g.cols(), 1.0f, dw.data() + gr * g.og() * g.rows(),
               g.rows());
    }
  return dw;
}

TEST(CpuConvBits, SameBitsAsThePreviousLoops) {
  const Conv cases[] = {
      // n  c  h   w   o kh kw sh sw ph pw dh dw groups
      {2, 1, 28, 28, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1}, // the cnn example's first
      {2, 4, 14, 14, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1}, // and second conv
      {1, 2, 9, 8, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1},   // dilated, as wide as x
      {1, 2, 6, 5, 2, 5, 3, 1, 1, 3, 1, 1, 1, 1},   // rows wholly in padding
      {2, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2, 1, 1, 2},   // stride, padding, groups
      {1, 2, 10, 9, 2, 3, 3, 1, 2, 2, 1, 2, 2, 2},  // dilation, depthwise
      {2, 3, 7, 6, 4, 3, 3, 3, 2, 0, 0, 1, 1, 1},   // stride > 1, no padding
      {1, 2, 5, 4, 3, 3, 3, 2, 3, 4, 3, 1, 2, 1},   // padding wider than rows
      {3, 1, 5, 5, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1},   // 1x1
      {1, 2, 3, 3, 2, 5, 5, 1, 1, 2, 2, 1, 1, 1},   // kernel beyond the input
  };
  for (DType t : kFloatTypes)
    for (const Conv &k : cases) {
      SCOPED_TRACE(std::string(name(t)) + " c=" + std::to_string(k.c) +
                   " stride=" + std::to_string(k.sh) + "," + std::to_string(k.sw) +
                   " pad=" + std::to_string(k.ph) + "," + std::to_string(k.pw) +
                   " groups=" + std::to_string(k.groups));
      Tensor x = randomTensor(t, {k.n, k.c, k.h, k.w}, 11);
      Tensor w = randomTensor(t, {k.o, k.cg(), k.kh, k.kw}, 12);
      Tensor b = randomTensor(t, {k.o}, 13);
      Tensor gy = randomTensor(t, {k.n, k.o, k.oh(), k.ow()}, 14);
      Tensor y(t, gy.shape), y0(t, gy.shape), dx(t, x.shape), dw(t, w.shape);
      run("graph.conv2d", {&x, &w, &b}, {&y}, k.attrs());
      run("graph.conv2d", {&x, &w}, {&y0}, k.attrs());
      run("graph.conv2d_backward_input", {&gy, &w}, {&dx}, k.attrs());
      run("graph.conv2d_backward_weight", {&x, &gy}, {&dw}, k.attrs());
      std::vector<float> fx = widened(x), fw = widened(w), fb = widened(b),
                         fg = widened(gy);
      expectSameBits(y, rounded(y, convRef(k, fx, fw, &fb)), "conv2d");
      expectSameBits(y0, rounded(y0, convRef(k, fx, fw, nullptr)),
                     "conv2d without bias");
      expectSameBits(dx, rounded(dx, convBackwardInputRef(k, fg, fw)),
                     "conv2d_backward_input");
      expectSameBits(dw, rounded(dw, convBackwardWeightRef(k, fx, fg)),
                     "conv2d_backward_weight");
    }
}

struct Pool {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  int64_t oh() const { return (h + 2 * ph - kh) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - kw) / sw + 1; }
  Attrs attrs() const {
    return Attrs{{"kernel_size", {kh, kw}}, {"stride", {sh, sw}},
                 {"padding", {ph, pw}}};
  }
};

// The previous window scan: first maximum in row-major order, a NaN taking
// over; -1 for a window wholly in the padding.
int64_t argmaxRef(const Pool &g, const float *plane, int64_t oy, int64_t ox,
                  float &best) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw, arg = -1;
  best = -std::numeric_limits<float>::infinity();
  for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y0 + g.kh, g.h); ++iy)
    for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x0 + g.kw, g.w); ++ix) {
      float v = plane[iy * g.w + ix];
      if (arg < 0 || v > best || std::isnan(v)) {
        best = v;
        arg = iy * g.w + ix;
      }
    }
  return arg;
}

// Inputs with repeated values, signed zeros and NaNs of distinct payloads,
// so ties, the sign of a zero maximum and which NaN wins all show.
Tensor poolInput(DType t, const Pool &k, uint32_t seed) {
  Tensor x(t, {k.n, k.c, k.h, k.w});
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pickv(0, 11);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int r = pickv(gen);
    double v = r < 4 ? r - 2.0 : r < 6 ? (r == 4 ? 0.0 : -0.0) : r - 7.5;
    x.set(i, v);
    if (r == 11 && i % 3 == 0) { // a NaN, its payload from i
      uint64_t bits = t == DType::F32   ? 0x7fc00000u | uint32_t(i & 0xff)
                      : t == DType::F16 ? 0x7e00u | uint32_t(i & 0x1f)
                                        : 0x7fc0u | uint32_t(i & 0x1f);
      std::memcpy(x.bytes.data() + i * dtypeSize(t), &bits, dtypeSize(t));
    }
  }
  return x;
}

TEST(CpuPoolBits, MaxPoolSameBitsAsThePreviousLoops) {
  const Pool cases[] = {
      // n  c  h   w  kh kw sh sw ph pw
      {2, 3, 28, 28, 2, 2, 2, 2, 0, 0}, // the cnn example's pooling
      {2, 3, 7, 9, 2, 2, 2, 2, 0, 0},   // odd sizes: a remainder row/column
      {1, 2, 7, 9, 2, 2, 2, 2, 1, 1},   // padded 2x2: border windows
      {1, 2, 6, 7, 2, 2, 2, 2, 1, 0},   // padded rows only
      {1, 2, 6, 5, 3, 3, 1, 1, 1, 1},   // overlapping 3x3
      {1, 2, 5, 8, 2, 2, 1, 1, 0, 0},   // overlapping 2x2 (stride 1)
      {1, 1, 5, 9, 2, 3, 2, 3, 1, 1},   // non-square
      {1, 1, 4, 4, 2, 2, 2, 2, 1, 1},   // every row's windows at the border
  };
  for (DType t : kFloatTypes)
    for (const Pool &k : cases) {
      SCOPED_TRACE(std::string(name(t)) + " " + std::to_string(k.h) + "x" +
                   std::to_string(k.w) + " k=" + std::to_string(k.kh) + "x" +
                   std::to_string(k.kw) + " pad=" + std::to_string(k.ph));
      Tensor x = poolInput(t, k, 21);
      Tensor gy = randomTensor(t, {k.n, k.c, k.oh(), k.ow()}, 22);
      Tensor y(t, gy.shape), dx(t, x.shape);
      run("graph.max_pool2d", {&x}, {&y}, k.attrs());
      run("graph.max_pool2d_backward", {&x, &gy}, {&dx}, k.attrs());
      std::vector<float> fx = widened(x), fg = widened(gy);
      std::vector<float> ry(size_t(y.numel())), rdx(size_t(x.numel()), 0.0f);
      for (int64_t p = 0; p < k.n * k.c; ++p)
        for (int64_t oy = 0; oy < k.oh(); ++oy)
          for (int64_t ox = 0; ox < k.ow(); ++ox) {
            int64_t o = (p * k.oh() + oy) * k.ow() + ox;
            float best;
            int64_t arg = argmaxRef(k, fx.data() + p * k.h * k.w, oy, ox, best);
            ry[size_t(o)] = best;
            if (arg >= 0)
              rdx[size_t(p * k.h * k.w + arg)] += fg[size_t(o)];
          }
      expectSameBits(y, rounded(y, ry), "max_pool2d");
      expectSameBits(dx, rounded(dx, rdx), "max_pool2d_backward");
    }
}

// The previous reduce_sum: one float add per element in row-major order.
std::vector<float> reduceSumRef(const Tensor &x, const std::vector<bool> &axes) {
  int rank = int(x.shape.size());
  std::vector<int64_t> ostride(static_cast<size_t>(rank));
  int64_t acc = 1;
  for (int d = rank - 1; d >= 0; --d) {
    ostride[size_t(d)] = axes[size_t(d)] ? 0 : acc;
    if (!axes[size_t(d)])
      acc *= x.shape[size_t(d)];
  }
  std::vector<float> y(size_t(acc), 0.0f), fx = widened(x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0, rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      o += (rest % x.shape[size_t(d)]) * ostride[size_t(d)];
      rest /= x.shape[size_t(d)];
    }
    y[size_t(o)] += fx[size_t(i)];
  }
  return y;
}

TEST(CpuReduceBits, SumOverTrailingDimensionsSameBitsAsElementwise) {
  struct Case {
    std::vector<int64_t> shape, axes;
  };
  const Case cases[] = {
      {{8, 16, 6, 7}, {0, 2, 3}}, // a conv bias gradient: 8 channels at a time
      {{5, 3, 4, 7}, {0, 2, 3}},  // 3 channels: groups end at repeats
      {{6, 1, 5, 5}, {0, 2, 3}},  // one channel: every row the same output
      {{4, 10, 9}, {1, 2}},       // all rows distinct
      {{3, 11, 13}, {0, 1, 2}},   // everything: one chain
      {{2, 9, 3, 5}, {1, 3}},     // a kept dimension between reduced ones
      {{7, 12}, {0}},             // last dimension kept: the other loop
  };
  for (DType t : kFloatTypes)
    for (const Case &c : cases) {
      Tensor x = randomTensor(t, c.shape, 31, -3, 3);
      std::vector<bool> axes(c.shape.size(), false);
      std::vector<int64_t> yshape;
      for (int64_t a : c.axes)
        axes[size_t(a)] = true;
      for (size_t d = 0; d < c.shape.size(); ++d)
        if (!axes[d])
          yshape.push_back(c.shape[d]);
      Tensor y(t, yshape);
      run("graph.reduce_sum", {&x}, {&y},
          Attrs{{"axes", c.axes}, {"keepdim", int64_t(0)}});
      expectSameBits(y, rounded(y, reduceSumRef(x, axes)),
                     std::string(name(t)) + " rank " +
                         std::to_string(c.shape.size()));
    }
}

} // namespace
} // namespace ampc::cpu::test
