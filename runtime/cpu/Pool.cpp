//===- Pool.cpp - max/avg pooling over H and W (NCHW) and backward --------===//
#include "runtime/cpu/Common.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ampc::cpu {

using namespace detail;

namespace {

// The shared geometry (runtime/kernels/Geometry.h) over N*C planes.
struct PoolGeom : PoolGeometry {
  int64_t planes() const { return n * c; }
};

// The flat index (within the plane) of the window's maximum: the first in
// row-major order, NaN winning as in PyTorch; padding never wins.
int64_t argmaxWindow(const PoolGeom &g, const float *plane, int64_t oy,
                     int64_t ox, float &best) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t arg = -1;
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
  forEachWindow(g, [&](int64_t p, int64_t oy, int64_t ox, int64_t o) {
    float best;
    argmaxWindow(g, fx.data() + p * g.h * g.w, oy, ox, best);
    fy[o] = best;
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
  forEachWindow(g, [&](int64_t p, int64_t oy, int64_t ox, int64_t o) {
    float best;
    int64_t arg = argmaxWindow(g, fx.data() + p * g.h * g.w, oy, ox, best);
    if (arg >= 0)
      fdx[p * g.h * g.w + arg] += fg[o];
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
