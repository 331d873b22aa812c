//===- BatchNorm.cpp - batch_norm and its backward ------------------------===//
//
// Per-channel statistics accumulate in float (two pass, biased variance), as
// layer_norm's do. The forward's "training" attribute (printed by the
// emitters: true in the training step, false in evaluation) picks batch
// statistics plus the in-place running update, or the running statistics.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/cpu/NormStats.h"
#include "runtime/kernels/BatchNorm.h"

#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// Channel |c| across the batch: N runs of S elements, C*S apart.
MeanVar channelStats(const float *x, const BatchNormGeometry &g, int64_t c) {
  return meanVar(x + c * g.spatial, g.batch, g.spatial,
                 g.channels * g.spatial);
}

} // namespace

// in: x, running_mean, running_var (FP32, updated in place when training),
// weight, bias. out: y.
void batchNormKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.batch_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef &rm = required(op, in, 1), &rv = required(op, in, 2);
  const TensorRef &w = required(op, in, 3), &b = required(op, in, 4);
  BatchNormGeometry g = batchNormGeometry(op, x, {&rm, &rv, &w, &b});
  if (rm.dtype != DType::F32 || rv.dtype != DType::F32)
    fail(op, "running statistics must be f32");
  float eps = float(attrs.getFloat("eps", 1e-5));
  double momentum = attrs.getFloat("momentum", 0.1);
  bool training = attrs.getBool("training", true);
  float *runMean = static_cast<float *>(rm.data);
  float *runVar = static_cast<float *>(rv.data);
  FloatIn fx(x), fw(w), fb(b);
  FloatOut fy(y);
  for (int64_t c = 0; c < g.channels; ++c) {
    float mean = runMean[c], var = runVar[c];
    if (training) {
      MeanVar s = channelStats(fx.data(), g, c);
      mean = s.mean;
      var = s.var;
      float unbiased = s.var * float(g.count()) / float(g.count() - 1);
      runMean[c] = num::runningUpdate(runMean[c], s.mean, momentum);
      runVar[c] = num::runningUpdate(runVar[c], unbiased, momentum);
    }
    float rstd = 1.0f / std::sqrt(var + eps);
    for (int64_t n = 0; n < g.batch; ++n) {
      int64_t base = (n * g.channels + c) * g.spatial;
      for (int64_t k = 0; k < g.spatial; ++k)
        fy[base + k] = (fx[base + k] - mean) * rstd * fw[c] + fb[c];
    }
  }
  fy.commit();
}

// in: x, weight, g. out: dx, dweight [C], dbias [C] (any may be null).
//   xhat = (x - mean) * rstd (batch statistics), dweight = sum g*xhat,
//   dbias = sum g, dx = rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)).
void batchNormBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.batch_norm_backward";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &gy = required(op, in, 2);
  const TensorRef *dx = optional(out, 0), *dw = optional(out, 1),
                  *db = optional(out, 2);
  BatchNormGeometry g = batchNormGeometry(op, x, {&w, dw, db});
  if (gy.numel() != x.numel() || (dx && dx->numel() != x.numel()))
    fail(op, "g and dx must have x's shape");
  float eps = float(attrs.getFloat("eps", 1e-5));
  FloatIn fx(x), fw(w), fg(gy);
  std::vector<float> gdx(dx ? size_t(x.numel()) : 0),
      gdw(size_t(g.channels)), gdb(size_t(g.channels));
  float count = float(g.count());
  for (int64_t c = 0; c < g.channels; ++c) {
    MeanVar s = channelStats(fx.data(), g, c);
    float rstd = rstdOf(s, eps);
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t n = 0; n < g.batch; ++n) {
      int64_t base = (n * g.channels + c) * g.spatial;
      for (int64_t k = 0; k < g.spatial; ++k) {
        float xhat = (fx[base + k] - s.mean) * rstd;
        sg += fg[base + k];
        sgx += fg[base + k] * xhat;
      }
    }
    gdw[c] = sgx;
    gdb[c] = sg;
    if (!dx)
      continue;
    float mgw = sg * fw[c] / count, mgwx = sgx * fw[c] / count;
    for (int64_t n = 0; n < g.batch; ++n) {
      int64_t base = (n * g.channels + c) * g.spatial;
      for (int64_t k = 0; k < g.spatial; ++k) {
        float xhat = (fx[base + k] - s.mean) * rstd;
        gdx[base + k] =
            normInputGrad(rstd, fg[base + k] * fw[c], xhat, mgw, mgwx);
      }
    }
  }
  narrowGrads(gdx, dx, gdw, dw, &gdb, db);
}

} // namespace ampc::cpu
