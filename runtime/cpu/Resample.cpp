//===- Resample.cpp - adaptive pooling, nearest/bilinear upsampling (NCHW) ===//
//
// Float sums as avg_pool2d (Pool.cpp): each window summed in float in
// row-major order, then divided as aten does (numerics::adaptiveAverage:
// by the height, then the width; one division by the area for a 1x1
// output, which aten computes as a mean); backward sums accumulate into a zeroed float dx in output
// order (the interpreter's order).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/kernels/ResampleGeometry.h"

#include <vector>

namespace ampc::cpu {

using namespace detail;
using numerics::adaptiveAverage;
using numerics::adaptiveEnd;
using numerics::adaptiveStart;
using numerics::nearestSource;

namespace {

// Calls f(plane, output index in plane, y0, y1, x0, x1) per adaptive window.
template <class F> void forEachAdaptive(const ResampleGeometry &g, F f) {
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < g.oh; ++a) {
      int64_t y0 = adaptiveStart(a, g.h, g.oh), y1 = adaptiveEnd(a, g.h, g.oh);
      for (int64_t b = 0; b < g.ow; ++b)
        f(p, a * g.ow + b, y0, y1, adaptiveStart(b, g.w, g.ow),
          adaptiveEnd(b, g.w, g.ow));
    }
}

// Source rows and columns of every output row and column.
struct NearestMap {
  std::vector<int64_t> rows, cols;
  explicit NearestMap(const ResampleGeometry &g) {
    for (int64_t a = 0; a < g.oh; ++a)
      rows.push_back(nearestSource(a, g.h, g.oh, g.stepH));
    for (int64_t b = 0; b < g.ow; ++b)
      cols.push_back(nearestSource(b, g.w, g.ow, g.stepW));
  }
};

} // namespace

void adaptiveAvgPool2dKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.adaptive_avg_pool2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  ResampleGeometry g = resampleGeometry(op, x, y);
  bool global = g.oh == 1 && g.ow == 1;
  FloatIn fx(x);
  FloatOut fy(y);
  forEachAdaptive(g, [&](int64_t p, int64_t o, int64_t y0, int64_t y1,
                         int64_t x0, int64_t x1) {
    const float *plane = fx.data() + p * g.h * g.w;
    float sum = 0.0f;
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix)
        sum += plane[iy * g.w + ix];
    fy[p * g.oh * g.ow + o] = adaptiveAverage(sum, y1 - y0, x1 - x0, global);
  });
  fy.commit();
}

// in: g; out: dx (its shape gives the input's).
void adaptiveAvgPool2dBackwardKernel(std::span<const TensorRef> in,
                                     std::span<const TensorRef> out,
                                     const Attrs &) {
  constexpr std::string_view op = "graph.adaptive_avg_pool2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  ResampleGeometry g = resampleGeometry(op, dx, gy);
  bool global = g.oh == 1 && g.ow == 1;
  FloatIn fg(gy);
  FloatOut fdx(dx, /*zeroed=*/true);
  forEachAdaptive(g, [&](int64_t p, int64_t o, int64_t y0, int64_t y1,
                         int64_t x0, int64_t x1) {
    float *plane = fdx.data() + p * g.h * g.w;
    float v = adaptiveAverage(fg[p * g.oh * g.ow + o], y1 - y0, x1 - x0,
                              global);
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix)
        plane[iy * g.w + ix] += v;
  });
  fdx.commit();
}

void upsampleNearest2dKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.upsample_nearest2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  ResampleGeometry g = nearestGeometry(op, x, y, attrs);
  NearestMap m(g);
  FloatIn fx(x);
  FloatOut fy(y);
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b)
        fy[(p * g.oh + a) * g.ow + b] =
            fx[(p * g.h + m.rows[a]) * g.w + m.cols[b]];
  fy.commit();
}

// in: g; out: dx. Each output's g added to the input it read.
void upsampleNearest2dBackwardKernel(std::span<const TensorRef> in,
                                     std::span<const TensorRef> out,
                                     const Attrs &attrs) {
  constexpr std::string_view op = "graph.upsample_nearest2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  ResampleGeometry g = nearestGeometry(op, dx, gy, attrs);
  NearestMap m(g);
  FloatIn fg(gy);
  FloatOut fdx(dx, /*zeroed=*/true);
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b)
        fdx[(p * g.h + m.rows[a]) * g.w + m.cols[b]] +=
            fg[(p * g.oh + a) * g.ow + b];
  fdx.commit();
}

namespace {

// The taps of every output row and column.
struct BilinearMap {
  std::vector<numerics::BilinearTap> rows, cols;
  explicit BilinearMap(const ResampleGeometry &g)
      : rows(numerics::bilinearTaps(g.h, g.oh, g.stepH, g.alignCorners)),
        cols(numerics::bilinearTaps(g.w, g.ow, g.stepW, g.alignCorners)) {}
};

} // namespace

void upsampleBilinear2dKernel(std::span<const TensorRef> in,
                              std::span<const TensorRef> out,
                              const Attrs &attrs) {
  constexpr std::string_view op = "graph.upsample_bilinear2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  ResampleGeometry g = bilinearGeometry(op, x, y, attrs);
  BilinearMap m(g);
  FloatIn fx(x);
  FloatOut fy(y);
  for (int64_t p = 0; p < g.planes; ++p) {
    const float *plane = fx.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a) {
      const numerics::BilinearTap &r = m.rows[a];
      const float *r0 = plane + r.i0 * g.w, *r1 = plane + r.i1 * g.w;
      for (int64_t b = 0; b < g.ow; ++b) {
        const numerics::BilinearTap &c = m.cols[b];
        fy[(p * g.oh + a) * g.ow + b] = numerics::bilinearValue(
            r0[c.i0], r0[c.i1], r1[c.i0], r1[c.i1], r.w0, r.w1, c.w0, c.w1);
      }
    }
  }
  fy.commit();
}

// in: g; out: dx. Each output's g, times each tap's weight, added to the
// four inputs it read, in output order (aten's CPU order).
void upsampleBilinear2dBackwardKernel(std::span<const TensorRef> in,
                                      std::span<const TensorRef> out,
                                      const Attrs &attrs) {
  constexpr std::string_view op = "graph.upsample_bilinear2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  ResampleGeometry g = bilinearGeometry(op, dx, gy, attrs);
  BilinearMap m(g);
  FloatIn fg(gy);
  FloatOut fdx(dx, /*zeroed=*/true);
  for (int64_t p = 0; p < g.planes; ++p) {
    float *plane = fdx.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a) {
      const numerics::BilinearTap &r = m.rows[a];
      for (int64_t b = 0; b < g.ow; ++b) {
        const numerics::BilinearTap &c = m.cols[b];
        float v = fg[(p * g.oh + a) * g.ow + b];
        plane[r.i0 * g.w + c.i0] += r.w0 * c.w0 * v;
        plane[r.i0 * g.w + c.i1] += r.w0 * c.w1 * v;
        plane[r.i1 * g.w + c.i0] += r.w1 * c.w0 * v;
        plane[r.i1 * g.w + c.i1] += r.w1 * c.w1 * v;
      }
    }
  }
  fdx.commit();
}

} // namespace ampc::cpu
