//===- ConvPool.cpp - conv2d, pooling and their backward ops (NCHW) --------===//
#include "compiler/interp/Kernel.h"

#include <limits>

using namespace ampc::interp;

namespace {

// The geometry shared by a convolution and its two backward ops.
struct ConvGeom {
  int64_t n, c, h, w;    // input
  int64_t o, kh, kw;     // weight [o, c / groups, kh, kw]
  int64_t oh, ow;        // output
  int64_t groups, cpg, opg;
  int64_t sh, sw, ph, pw, dh, dw;

  ConvGeom(const OpContext &ctx, const Shape &x, const Shape &wt,
           const Shape &y) {
    n = x[0], c = x[1], h = x[2], w = x[3];
    o = wt[0], kh = wt[2], kw = wt[3];
    oh = y[2], ow = y[3];
    groups = ctx.getInt("groups", 1);
    cpg = c / groups, opg = o / groups;
    auto s = ctx.getInts("stride", {1, 1});
    auto p = ctx.getInts("padding", {0, 0});
    auto d = ctx.getInts("dilation", {1, 1});
    sh = s[0], sw = s[1], ph = p[0], pw = p[1], dh = d[0], dw = d[1];
  }
  int64_t xIndex(int64_t ni, int64_t ci, int64_t hi, int64_t wi) const {
    return ((ni * c + ci) * h + hi) * w + wi;
  }
  int64_t wIndex(int64_t oi, int64_t ci, int64_t a, int64_t b) const {
    return ((oi * cpg + ci) * kh + a) * kw + b;
  }
  int64_t yIndex(int64_t ni, int64_t oi, int64_t a, int64_t b) const {
    return ((ni * o + oi) * oh + a) * ow + b;
  }
  // Calls f(input channel, ih, iw, weight channel, ki, kj) for every tap of
  // output (oi, a, b) that lands inside the input.
  template <typename F>
  void forTaps(int64_t oi, int64_t a, int64_t b, F f) const {
    int64_t g = oi / opg;
    for (int64_t ci = 0; ci < cpg; ++ci)
      for (int64_t ki = 0; ki < kh; ++ki)
        for (int64_t kj = 0; kj < kw; ++kj) {
          int64_t hi = a * sh - ph + ki * dh, wi = b * sw - pw + kj * dw;
          if (hi >= 0 && hi < h && wi >= 0 && wi < w)
            f(g * cpg + ci, hi, wi, ci, ki, kj);
        }
  }
  // Calls f(x index, w index, y index) for every (output, in-bounds tap)
  // pair: the whole convolution as one loop, forward or backward.
  template <typename F>
  void forEachProduct(F f) const {
    for (int64_t ni = 0; ni < n; ++ni)
      for (int64_t oi = 0; oi < o; ++oi)
        for (int64_t a = 0; a < oh; ++a)
          for (int64_t b = 0; b < ow; ++b)
            forTaps(oi, a, b,
                    [&](int64_t ci, int64_t hi, int64_t wi, int64_t wc,
                        int64_t ki, int64_t kj) {
                      f(xIndex(ni, ci, hi, wi), wIndex(oi, wc, ki, kj),
                        yIndex(ni, oi, a, b));
                    });
  }
};

KernelResult conv2d(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  ConvGeom g(ctx, in[0].shape, in[1].shape, out.shape);
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t oi = 0; oi < g.o; ++oi)
      for (int64_t a = 0; a < g.oh; ++a)
        for (int64_t b = 0; b < g.ow; ++b) {
          Accum acc(ctx);
          g.forTaps(oi, a, b,
                    [&](int64_t ci, int64_t hi, int64_t wi, int64_t wc,
                        int64_t ki, int64_t kj) {
                      acc.add(in[0].f[g.xIndex(ni, ci, hi, wi)] *
                              in[1].f[g.wIndex(oi, wc, ki, kj)]);
                    });
          if (in.size() > 2)
            acc.add(in[2].f[oi]);
          out.f[g.yIndex(ni, oi, a, b)] = acc.get();
        }
  return one(std::move(out));
}

// conv2d_backward_input(g, weight) -> dx: every output tap scatters back.
KernelResult conv2dBackwardInput(const OpContext &ctx,
                                 std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  const Tensor &gy = in[0], &wt = in[1];
  ConvGeom(ctx, out.shape, wt.shape, gy.shape)
      .forEachProduct([&](int64_t xi, int64_t wi, int64_t yi) {
        accumulate(ctx, out.f[xi], gy.f[yi] * wt.f[wi]);
      });
  return one(std::move(out));
}

// conv2d_backward_weight(x, g) -> dw.
KernelResult conv2dBackwardWeight(const OpContext &ctx,
                                  std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  const Tensor &x = in[0], &gy = in[1];
  ConvGeom(ctx, x.shape, out.shape, gy.shape)
      .forEachProduct([&](int64_t xi, int64_t wi, int64_t yi) {
        accumulate(ctx, out.f[wi], gy.f[yi] * x.f[xi]);
      });
  return one(std::move(out));
}

struct PoolGeom {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
  PoolGeom(const OpContext &ctx, const Shape &x, const Shape &y) {
    planes = x[0] * x[1], h = x[2], w = x[3], oh = y[2], ow = y[3];
    auto k = ctx.getInts("kernel_size", {1, 1});
    auto s = ctx.getOptionalInts("stride").value_or(k);
    auto p = ctx.getInts("padding", {0, 0});
    kh = k[0], kw = k[1], sh = s[0], sw = s[1], ph = p[0], pw = p[1];
  }
  // Calls f(flat input index within the plane) for each window position of
  // output (a, b) inside the input, in row-major order.
  template <typename F> void forWindow(int64_t a, int64_t b, F f) const {
    for (int64_t ki = 0; ki < kh; ++ki)
      for (int64_t kj = 0; kj < kw; ++kj) {
        int64_t hi = a * sh - ph + ki, wi = b * sw - pw + kj;
        if (hi >= 0 && hi < h && wi >= 0 && wi < w)
          f(hi * w + wi);
      }
  }
  // The first maximum of window (a, b) of plane |x| (padding never wins).
  int64_t argmax(const double *x, int64_t a, int64_t b) const {
    int64_t best = -1;
    forWindow(a, b, [&](int64_t k) {
      if (best < 0 || x[k] > x[best])
        best = k;
    });
    return best;
  }
};

KernelResult maxPool2d(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  PoolGeom g(ctx, in[0].shape, out.shape);
  for (int64_t p = 0; p < g.planes; ++p) {
    const double *x = in[0].f.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b)
        out.f[(p * g.oh + a) * g.ow + b] = x[g.argmax(x, a, b)];
  }
  return one(std::move(out));
}

// Padded zeros count in the divisor (count_include_pad=True).
KernelResult avgPool2d(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  PoolGeom g(ctx, in[0].shape, out.shape);
  for (int64_t p = 0; p < g.planes; ++p) {
    const double *x = in[0].f.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b) {
        Accum acc(ctx);
        g.forWindow(a, b, [&](int64_t k) { acc.add(x[k]); });
        out.f[(p * g.oh + a) * g.ow + b] = acc.get() / double(g.kh * g.kw);
      }
  }
  return one(std::move(out));
}

// max_pool2d_backward(x, g): each window's g goes to its first maximum.
KernelResult maxPool2dBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  PoolGeom g(ctx, in[0].shape, in[1].shape);
  for (int64_t p = 0; p < g.planes; ++p) {
    const double *x = in[0].f.data() + p * g.h * g.w;
    double *dx = out.f.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b)
        accumulate(ctx, dx[g.argmax(x, a, b)],
                   in[1].f[(p * g.oh + a) * g.ow + b]);
  }
  return one(std::move(out));
}

// avg_pool2d_backward(g) -> dx (spelled): g / (kh * kw) to every window cell.
KernelResult avgPool2dBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  PoolGeom g(ctx, out.shape, in[0].shape);
  for (int64_t p = 0; p < g.planes; ++p) {
    double *dx = out.f.data() + p * g.h * g.w;
    for (int64_t a = 0; a < g.oh; ++a)
      for (int64_t b = 0; b < g.ow; ++b) {
        double v = in[0].f[(p * g.oh + a) * g.ow + b] / double(g.kh * g.kw);
        g.forWindow(a, b, [&](int64_t k) { accumulate(ctx, dx[k], v); });
      }
  }
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerConvPoolKernels(KernelTable &t) {
  t["graph.conv2d"] = conv2d;
  t["graph.conv2d_backward_input"] = conv2dBackwardInput;
  t["graph.conv2d_backward_weight"] = conv2dBackwardWeight;
  t["graph.max_pool2d"] = maxPool2d;
  t["graph.avg_pool2d"] = avgPool2d;
  t["graph.max_pool2d_backward"] = maxPool2dBackward;
  t["graph.avg_pool2d_backward"] = avgPool2dBackward;
}
