//===- Pool.cpp - max/avg pooling over H and W (NCHW) and backward --------===//
#include "runtime/cpu/Common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// The shared geometry (runtime/kernels/Geometry.h) over N*C planes.
struct PoolGeom : PoolGeometry {
  int64_t planes() const { return n * c; }
};

// Takes v at plane index i if it beats best: the first maximum in row-major
// order wins, and a NaN wins (a later NaN over an earlier one), as PyTorch.
// Written as selects so that the 2x2 loop below vectorizes.
inline void pick(float &best, int64_t &arg, float v, int64_t i) {
  bool t = (v > best) | (v != v);
  best = t ? v : best;
  arg = t ? i : arg;
}

// One axis's window [lo, hi) of input positions per output position,
// clamped to the input: padding never wins.
struct Span {
  int64_t lo, hi;
};
std::vector<Span> windowSpans(int64_t out, int64_t in, int64_t stride,
                              int64_t pad, int64_t k) {
  std::vector<Span> s(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t x0 = o * stride - pad;
    s[size_t(o)] = {std::max<int64_t>(x0, 0), std::min(x0 + k, in)};
  }
  return s;
}

// The output columns whose window lies wholly inside the input.
Span interiorColumns(const PoolGeom &g) {
  int64_t lo = std::min((g.pw + g.sw - 1) / g.sw, g.ow);
  int64_t last = g.w + g.pw - g.kw; // the last window start that fits
  int64_t hi = last < 0 ? lo : std::clamp(last / g.sw + 1, lo, g.ow);
  return {lo, hi};
}

// rowArgmax's 2x2 windows at stride 2 over input rows r0 and r1 = r0 + w,
// window k at columns 2k and 2k + 1 and plane index at + 2k. Restrict: the
// compiler vectorizes the loop only without aliasing checks.
void argmax2x2(const float *__restrict r0, const float *__restrict r1,
               int64_t n, int64_t at, int64_t w, float *__restrict best,
               int64_t *__restrict arg) {
  for (int64_t k = 0; k < n; ++k) {
    float b = r0[2 * k];
    int64_t a = at + 2 * k;
    pick(b, a, r0[2 * k + 1], at + 2 * k + 1);
    pick(b, a, r1[2 * k], at + 2 * k + w);
    pick(b, a, r1[2 * k + 1], at + 2 * k + w + 1);
    best[k] = b;
    arg[k] = a;
  }
}

// The maxima of one output row's windows (rows r of the plane): best[ox]
// and arg[ox], the index in the plane (-1, best -inf: an empty window).
// 2x2 windows at stride 2 wholly inside the input, the common pooling, take
// a loop without bounds that the compiler vectorizes.
void rowArgmax(const PoolGeom &g, const float *plane, Span r,
               const std::vector<Span> &cols, Span inner, float *best,
               int64_t *arg) {
  auto window = [&](int64_t ox) {
    Span c = cols[size_t(ox)];
    float b = -std::numeric_limits<float>::infinity();
    int64_t a = -1;
    for (int64_t iy = r.lo; iy < r.hi; ++iy)
      for (int64_t ix = c.lo; ix < c.hi; ++ix)
        if (a < 0) {
          b = plane[iy * g.w + ix];
          a = iy * g.w + ix;
        } else {
          pick(b, a, plane[iy * g.w + ix], iy * g.w + ix);
        }
    best[ox] = b;
    arg[ox] = a;
  };
  int64_t ox = 0;
  if (g.kh == 2 && g.kw == 2 && g.sw == 2 && r.hi - r.lo == 2) {
    for (; ox < inner.lo; ++ox)
      window(ox);
    const float *r0 = plane + r.lo * g.w;
    int64_t ix = 2 * inner.lo - g.pw; // the first interior window's column
    argmax2x2(r0 + ix, r0 + g.w + ix, inner.hi - inner.lo, r.lo * g.w + ix,
              g.w, best + ox, arg + ox);
    ox = inner.hi;
  }
  for (; ox < g.ow; ++ox)
    window(ox);
}

// Calls f(plane, first output index of the row, best, arg) for every output
// row of max pooling over x, with rowArgmax's maxima.
template <class F> void forEachArgmaxRow(const PoolGeom &g, const float *x, F f) {
  std::vector<Span> rows = windowSpans(g.oh, g.h, g.sh, g.ph, g.kh);
  std::vector<Span> cols = windowSpans(g.ow, g.w, g.sw, g.pw, g.kw);
  Span inner = interiorColumns(g);
  std::vector<float> best(static_cast<size_t>(g.ow));
  std::vector<int64_t> arg(static_cast<size_t>(g.ow));
  for (int64_t p = 0; p < g.planes(); ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      rowArgmax(g, x + p * g.h * g.w, rows[size_t(oy)], cols, inner,
                best.data(), arg.data());
      f(p, (p * g.oh + oy) * g.ow, best.data(), arg.data());
    }
}

template <class F> void forEachWindow(const PoolGeom &g, F f) {
  for (int64_t p = 0; p < g.planes(); ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        f(p, oy, ox, (p * g.oh + oy) * g.ow + ox);
}

} // namespace

void maxPool2dKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.max_pool2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  PoolGeom g{poolGeometry(op, x, y, attrs)};
  FloatIn fx(x);
  FloatOut fy(y);
  float *py = fy.data();
  forEachArgmaxRow(g, fx.data(),
                   [&](int64_t, int64_t o, const float *best, const int64_t *) {
                     std::copy(best, best + g.ow, py + o);
                   });
  fy.commit();
}

// Padded zeros count in the divisor (count_include_pad): kh * kw always,
// since windows never leave the padded input.
void avgPool2dKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.avg_pool2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  PoolGeom g{poolGeometry(op, x, y, attrs)};
  FloatIn fx(x);
  FloatOut fy(y);
  float div = float(g.kh * g.kw);
  forEachWindow(g, [&](int64_t p, int64_t oy, int64_t ox, int64_t o) {
    const float *plane = fx.data() + p * g.h * g.w;
    int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    float sum = 0.0f;
    for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y0 + g.kh, g.h); ++iy)
      for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x0 + g.kw, g.w); ++ix)
        sum += plane[iy * g.w + ix];
    fy[o] = sum / div;
  });
  fy.commit();
}

// Each window's g goes to its first maximum (accumulated in float).
void maxPool2dBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.max_pool2d_backward";
  const TensorRef &x = required(op, in, 0), &gy = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  PoolGeom g{poolGeometry(op, x, gy, attrs, &dx)};
  FloatIn fx(x), fg(gy);
  FloatOut fdx(dx, /*zeroed=*/true);
  float *pdx = fdx.data();
  const float *pg = fg.data();
  int64_t hw = g.h * g.w;
  forEachArgmaxRow(g, fx.data(), [&](int64_t p, int64_t o, const float *,
                                     const int64_t *arg) {
    float *plane = pdx + p * hw;
    for (int64_t ox = 0; ox < g.ow; ++ox)
      if (arg[ox] >= 0)
        plane[arg[ox]] += pg[o + ox];
  });
  fdx.commit();
}

void avgPool2dBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.avg_pool2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  PoolGeom g{poolGeometry(op, dx, gy, attrs)};
  FloatIn fg(gy);
  FloatOut fdx(dx, /*zeroed=*/true);
  float div = float(g.kh * g.kw);
  forEachWindow(g, [&](int64_t p, int64_t oy, int64_t ox, int64_t o) {
    float *plane = fdx.data() + p * g.h * g.w;
    float v = fg[o] / div;
    int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y0 + g.kh, g.h); ++iy)
      for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x0 + g.kw, g.w); ++ix)
        plane[iy * g.w + ix] += v;
  });
  fdx.commit();
}

} // namespace ampc::cpu
