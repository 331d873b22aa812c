//===- Normalization.cpp - softmax, log_softmax, layer/rms norm + VJPs -----===//
//
// Statistics are computed in double and each result rounded once to its type:
// at least as accurate as the FP32 the AMP policy runs these ops in.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "compiler/interp/kernels/NormStats.h"
#include "dialects/Graph/GraphOps.h"

#include <cmath>

using namespace ampc::interp;

namespace {

// Calls f(base, stride) for every 1-D lane of |shape| along |axis|.
template <typename F> void forLanes(const Shape &shape, int64_t axis, F f) {
  int64_t len = shape[axis], inner = 1, outer = 1;
  for (size_t k = axis + 1; k < shape.size(); ++k)
    inner *= shape[k];
  for (int64_t k = 0; k < axis; ++k)
    outer *= shape[k];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      f(o * len * inner + i, inner);
}

template <bool Log>
KernelResult softmax(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  int64_t axis = normAxis(ctx.getInt("axis", -1), in[0].rank());
  if (axis < 0)
    return ctx.error() << "softmax axis out of range";
  int64_t len = out.shape[axis];
  const std::vector<double> &x = in[0].f;
  forLanes(out.shape, axis, [&](int64_t base, int64_t stride) {
    double m = -INFINITY;
    for (int64_t j = 0; j < len; ++j)
      m = std::max(m, x[base + j * stride]);
    double s = 0;
    for (int64_t j = 0; j < len; ++j)
      s += std::exp(x[base + j * stride] - m);
    for (int64_t j = 0; j < len; ++j) {
      double z = x[base + j * stride] - m;
      out.f[base + j * stride] = Log ? z - std::log(s) : std::exp(z) / s;
    }
  });
  return one(std::move(out));
}

// Rows of the last axis: (rows, d).
std::pair<int64_t, int64_t> rowsOf(const Tensor &x) {
  int64_t d = x.shape.empty() ? 1 : x.shape.back();
  return {d ? x.size() / d : 0, d};
}

double rmsInv(const double *x, int64_t d, double eps) {
  double ms = 0;
  for (int64_t j = 0; j < d; ++j)
    ms += x[j] * x[j];
  return 1.0 / std::sqrt(ms / double(d) + eps);
}

KernelResult layerNorm(const OpContext &ctx, std::span<const Tensor> in) {
  auto op = mlir::cast<ampc::graph::LayerNormOp>(ctx.getOp());
  const Tensor *w = op.getWeight() ? &in[1] : nullptr;
  const Tensor *b = op.getBias() ? &in[w ? 2 : 1] : nullptr;
  double eps = ctx.getFloat("eps", 1e-5);
  Tensor out = ctx.makeResult();
  auto [rows, d] = rowsOf(in[0]);
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = in[0].f.data() + r * d;
    NormStats s = normStats(x, 1, d, d, eps);
    for (int64_t j = 0; j < d; ++j) {
      double y = (x[j] - s.mean) * s.rstd;
      if (w)
        y *= w->f[j];
      if (b)
        y += b->f[j];
      out.f[r * d + j] = y;
    }
  }
  return one(std::move(out));
}

// rms_norm's eps when the op has none: torch.finfo of the type it runs in
// (its result 0 has x's type, for the backward too).
double rmsNormDefaultEps(const OpContext &ctx) {
  switch (ctx.resultType(0)) {
  case ElemType::F16:
    return 0x1p-10;
  case ElemType::BF16:
    return 0x1p-7;
  default:
    return 0x1p-23;
  }
}

KernelResult rmsNorm(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor *w = in.size() > 1 ? &in[1] : nullptr;
  double eps = ctx.getFloat("eps", rmsNormDefaultEps(ctx));
  Tensor out = ctx.makeResult();
  auto [rows, d] = rowsOf(in[0]);
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = in[0].f.data() + r * d;
    double inv = rmsInv(x, d, eps);
    for (int64_t j = 0; j < d; ++j)
      out.f[r * d + j] = x[j] * inv * (w ? w->f[j] : 1.0);
  }
  return one(std::move(out));
}

// layer_norm_backward(x, weight, g) -> dx, dweight, dbias.
KernelResult layerNormBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  const Tensor &xt = in[0], &w = in[1], &gt = in[2];
  double eps = ctx.getFloat("eps", 1e-5);
  Tensor dx = ctx.makeResult(0), dw = ctx.makeResult(1),
         db = ctx.makeResult(2);
  auto [rows, d] = rowsOf(xt);
  std::vector<double> dwAcc(d, 0.0), dbAcc(d, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = xt.f.data() + r * d, *g = gt.f.data() + r * d;
    NormStats s = normStats(x, 1, d, d, eps);
    double meanDy = 0, meanDyXhat = 0;
    for (int64_t j = 0; j < d; ++j) {
      double xhat = (x[j] - s.mean) * s.rstd, dy = g[j] * w.f[j];
      meanDy += dy;
      meanDyXhat += dy * xhat;
      accumulate(ctx, dwAcc[j], g[j] * xhat);
      accumulate(ctx, dbAcc[j], g[j]);
    }
    meanDy /= double(d);
    meanDyXhat /= double(d);
    for (int64_t j = 0; j < d; ++j) {
      double xhat = (x[j] - s.mean) * s.rstd, dy = g[j] * w.f[j];
      dx.f[r * d + j] = s.rstd * (dy - meanDy - xhat * meanDyXhat);
    }
  }
  dw.f = dwAcc;
  db.f = dbAcc;
  return several(std::move(dx), std::move(dw), std::move(db));
}

// rms_norm_backward(x, weight, g) -> dx, dweight.
KernelResult rmsNormBackward(const OpContext &ctx,
                             std::span<const Tensor> in) {
  const Tensor &xt = in[0], &w = in[1], &gt = in[2];
  double eps = ctx.getFloat("eps", rmsNormDefaultEps(ctx));
  Tensor dx = ctx.makeResult(0), dw = ctx.makeResult(1);
  auto [rows, d] = rowsOf(xt);
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = xt.f.data() + r * d, *g = gt.f.data() + r * d;
    double inv = rmsInv(x, d, eps), dot = 0;
    for (int64_t j = 0; j < d; ++j) {
      dot += g[j] * w.f[j] * x[j];
      accumulate(ctx, dw.f[j], g[j] * x[j] * inv);
    }
    for (int64_t j = 0; j < d; ++j)
      dx.f[r * d + j] =
          inv * g[j] * w.f[j] - x[j] * inv * inv * inv * dot / double(d);
  }
  return several(std::move(dx), std::move(dw));
}

} // namespace

void ampc::interp::registerNormalizationKernels(KernelTable &t) {
  t["graph.softmax"] = softmax<false>;
  t["graph.log_softmax"] = softmax<true>;
  t["graph.layer_norm"] = layerNorm;
  t["graph.rms_norm"] = rmsNorm;
  t["graph.layer_norm_backward"] = layerNormBackward;
  t["graph.rms_norm_backward"] = rmsNormBackward;
}
