//===- Resample.cpp - adaptive pooling, nearest/bilinear upsampling (NCHW) ===//
//
// Same conventions as avg_pool2d (ConvPool.cpp): window sums in an FP32
// accumulator under typed numerics; then, as aten, divided by the window's
// height and then by its width, or once by the area for a 1x1 output (a
// float rounding after each under typed numerics); backward sums accumulate into dx in output order.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "runtime/numerics/Resample.h"

using namespace ampc::interp;
using namespace ampc::numerics;

namespace {

// [N, C, H, W] input and [N, C, OH, OW] output as N*C planes.
struct Planes {
  int64_t planes, h, w, oh, ow;
  Planes(const Shape &x, const Shape &y)
      : planes(x[0] * x[1]), h(x[2]), w(x[3]), oh(y[2]), ow(y[3]) {}
};

// Calls f(output index within the plane, input index within the plane,
// window height, window width) for every input cell of every window.
template <class F> void forAdaptive(const Planes &g, F f) {
  for (int64_t a = 0; a < g.oh; ++a) {
    int64_t y0 = adaptiveStart(a, g.h, g.oh), y1 = adaptiveEnd(a, g.h, g.oh);
    for (int64_t b = 0; b < g.ow; ++b) {
      int64_t x0 = adaptiveStart(b, g.w, g.ow), x1 = adaptiveEnd(b, g.w, g.ow);
      for (int64_t iy = y0; iy < y1; ++iy)
        for (int64_t ix = x0; ix < x1; ++ix)
          f(a * g.ow + b, iy * g.w + ix, y1 - y0, x1 - x0);
    }
  }
}

// numerics::adaptiveAverage in double: v / kh / kw (v / (kh * kw) for a
// 1x1 output), rounded to float after each division under typed numerics.
double divide(const OpContext &ctx, const Planes &g, double v, int64_t kh,
              int64_t kw) {
  auto round = [&](double d) {
    return ctx.fp32Accumulate() ? double(float(d)) : d;
  };
  if (g.oh == 1 && g.ow == 1)
    return round(v / double(kh * kw));
  return round(round(v / double(kh)) / double(kw));
}

KernelResult adaptiveAvgPool2d(const OpContext &ctx,
                               std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Planes g(in[0].shape, out.shape);
  for (int64_t p = 0; p < g.planes; ++p) {
    const double *x = in[0].f.data() + p * g.h * g.w;
    double *y = out.f.data() + p * g.oh * g.ow;
    // Window cells arrive in order, one window after the other.
    Accum acc(ctx);
    int64_t cur = -1, curH = 0, curW = 0;
    auto flush = [&] {
      if (cur >= 0)
        y[cur] = divide(ctx, g, acc.get(), curH, curW);
      acc = Accum(ctx);
    };
    forAdaptive(g, [&](int64_t o, int64_t i, int64_t kh, int64_t kw) {
      if (o != cur) {
        flush();
        cur = o, curH = kh, curW = kw;
      }
      acc.add(x[i]);
    });
    flush();
  }
  return one(std::move(out));
}

// adaptive_avg_pool2d_backward(g) -> dx (spelled).
KernelResult adaptiveAvgPool2dBackward(const OpContext &ctx,
                                       std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Planes g(out.shape, in[0].shape);
  for (int64_t p = 0; p < g.planes; ++p) {
    const double *gy = in[0].f.data() + p * g.oh * g.ow;
    double *dx = out.f.data() + p * g.h * g.w;
    forAdaptive(g, [&](int64_t o, int64_t i, int64_t kh, int64_t kw) {
      accumulate(ctx, dx[i], divide(ctx, g, gy[o], kh, kw));
    });
  }
  return one(std::move(out));
}

// The source rows and columns of every output row and column.
struct NearestMap {
  std::vector<int64_t> rows, cols;
  NearestMap(const OpContext &ctx, const Planes &g) {
    float sh = nearestStep(g.h, g.oh, ctx.getFloat("scales_h", 0.0));
    float sw = nearestStep(g.w, g.ow, ctx.getFloat("scales_w", 0.0));
    for (int64_t a = 0; a < g.oh; ++a)
      rows.push_back(nearestSource(a, g.h, g.oh, sh));
    for (int64_t b = 0; b < g.ow; ++b)
      cols.push_back(nearestSource(b, g.w, g.ow, sw));
  }
};

KernelResult upsampleNearest2d(const OpContext &ctx,
                               std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Planes g(in[0].shape, out.shape);
  NearestMap m(ctx, g);
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b)
        out.f[(p * g.oh + a) * g.ow + b] =
            in[0].f[(p * g.h + m.rows[a]) * g.w + m.cols[b]];
  return one(std::move(out));
}

// upsample_nearest2d_backward(g) -> dx (spelled): sums in output order.
KernelResult upsampleNearest2dBackward(const OpContext &ctx,
                                       std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Planes g(out.shape, in[0].shape);
  NearestMap m(ctx, g);
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b)
        accumulate(ctx, out.f[(p * g.h + m.rows[a]) * g.w + m.cols[b]],
                   in[0].f[(p * g.oh + a) * g.ow + b]);
  return one(std::move(out));
}

// The taps of every output row and column (numerics::bilinearTap).
struct BilinearMap {
  std::vector<BilinearTap> rows, cols;
  BilinearMap(const OpContext &ctx, const Planes &g) {
    bool corners = ctx.getFlag("align_corners");
    float sh = bilinearStep(g.h, g.oh, corners, ctx.getFloat("scales_h", 0.0));
    float sw = bilinearStep(g.w, g.ow, corners, ctx.getFloat("scales_w", 0.0));
    rows = bilinearTaps(g.h, g.oh, sh, corners);
    cols = bilinearTaps(g.w, g.ow, sw, corners);
  }
};

// In float under typed numerics (the kernels' operations, in their order),
// else in double.
KernelResult upsampleBilinear2d(const OpContext &ctx,
                                std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Planes g(in[0].shape, out.shape);
  BilinearMap m(ctx, g);
  const bool typed = ctx.fp32Accumulate();
  for (int64_t p = 0; p < g.planes; ++p) {
    const double *x = in[0].f.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a) {
      const BilinearTap &r = m.rows[a];
      for (int64_t b = 0; b < g.ow; ++b) {
        const BilinearTap &c = m.cols[b];
        double v00 = x[r.i0 * g.w + c.i0], v01 = x[r.i0 * g.w + c.i1];
        double v10 = x[r.i1 * g.w + c.i0], v11 = x[r.i1 * g.w + c.i1];
        out.f[(p * g.oh + a) * g.ow + b] =
            typed ? double(bilinearValue<float>(float(v00), float(v01),
                                                float(v10), float(v11), r.w0,
                                                r.w1, c.w0, c.w1))
                  : bilinearValue<double>(v00, v01, v10, v11, r.w0, r.w1, c.w0,
                                          c.w1);
      }
    }
  }
  return one(std::move(out));
}

// upsample_bilinear2d_backward(g) -> dx (spelled): each output's weighted g
// added to its four taps, in output order.
KernelResult upsampleBilinear2dBackward(const OpContext &ctx,
                                        std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Planes g(out.shape, in[0].shape);
  BilinearMap m(ctx, g);
  const bool typed = ctx.fp32Accumulate();
  auto weighted = [&](float h, float w, double v) {
    return typed ? double(h * w * float(v)) : double(h) * double(w) * v;
  };
  for (int64_t p = 0; p < g.planes; ++p) {
    double *dx = out.f.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a) {
      const BilinearTap &r = m.rows[a];
      for (int64_t b = 0; b < g.ow; ++b) {
        const BilinearTap &c = m.cols[b];
        double v = in[0].f[(p * g.oh + a) * g.ow + b];
        accumulate(ctx, dx[r.i0 * g.w + c.i0], weighted(r.w0, c.w0, v));
        accumulate(ctx, dx[r.i0 * g.w + c.i1], weighted(r.w0, c.w1, v));
        accumulate(ctx, dx[r.i1 * g.w + c.i0], weighted(r.w1, c.w0, v));
        accumulate(ctx, dx[r.i1 * g.w + c.i1], weighted(r.w1, c.w1, v));
      }
    }
  }
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerResampleKernels(KernelTable &t) {
  t["graph.adaptive_avg_pool2d"] = adaptiveAvgPool2d;
  t["graph.adaptive_avg_pool2d_backward"] = adaptiveAvgPool2dBackward;
  t["graph.upsample_nearest2d"] = upsampleNearest2d;
  t["graph.upsample_nearest2d_backward"] = upsampleNearest2dBackward;
  t["graph.upsample_bilinear2d"] = upsampleBilinear2d;
  t["graph.upsample_bilinear2d_backward"] = upsampleBilinear2dBackward;
}
