//===- BatchNorm.cu - batch_norm and its backward -------------------------===//
//
// One block per channel: block-wide sums in a fixed order over the channel's
// N*H*W values (deterministic), FP32 math, one rounding per result. In the
// training step the block also updates the channel's running statistics in
// place (num::runningUpdate, the formula runtime/cpu uses); in evaluation it
// normalises with them.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/kernels/BatchNorm.h"

namespace ampc::cuda {

using namespace detail;
using kernels::detail::BatchNormGeometry;
using kernels::detail::batchNormGeometry;

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t at(const BatchNormGeometry &g, int64_t c,
                                      int64_t j) {
  int64_t b = j / g.spatial, k = j % g.spatial;
  return (b * g.channels + c) * g.spatial + k;
}

// Block-wide mean and biased variance of channel |c| (two pass).
__device__ float2 channelStats(const void *x, int tx, BatchNormGeometry g,
                               int64_t c) {
  int64_t n = g.count();
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    s += ld(x, tx, at(g, c, j));
  float mean = blockSum(s) / float(n);
  float v = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    float d = ld(x, tx, at(g, c, j)) - mean;
    v += d * d;
  }
  return {mean, blockSum(v) / float(n)};
}

__global__ void batchNormChannels(const void *x, int tx, float *runMean,
                                  float *runVar, const void *w, int tw,
                                  const void *b, int tb, void *y, int ty,
                                  BatchNormGeometry g, float eps,
                                  double momentum, bool training) {
  int64_t c = blockIdx.x;
  float mean, var;
  if (training) {
    float2 s = channelStats(x, tx, g, c);
    mean = s.x;
    var = s.y;
    if (threadIdx.x == 0) {
      float unbiased = var * float(g.count()) / float(g.count() - 1);
      runMean[c] = num::runningUpdate(runMean[c], mean, momentum);
      runVar[c] = num::runningUpdate(runVar[c], unbiased, momentum);
    }
  } else {
    mean = runMean[c];
    var = runVar[c];
  }
  float rstd = 1.0f / sqrtf(var + eps);
  float wc = ld(w, tw, c), bc = ld(b, tb, c);
  for (int64_t j = threadIdx.x; j < g.count(); j += blockDim.x) {
    int64_t i = at(g, c, j);
    st(y, ty, i, (ld(x, tx, i) - mean) * rstd * wc + bc);
  }
}

__global__ void batchNormBackwardChannels(const void *x, int tx, const void *w,
                                          int tw, const void *gy, int tg,
                                          void *dx, int tdx, void *dw, int tdw,
                                          void *db, int tdb,
                                          BatchNormGeometry g, float eps) {
  int64_t c = blockIdx.x, n = g.count();
  float2 s = channelStats(x, tx, g, c);
  float rstd = 1.0f / sqrtf(s.y + eps);
  float sg = 0.0f, sgx = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    int64_t i = at(g, c, j);
    float gi = ld(gy, tg, i);
    sg += gi;
    sgx += gi * ((ld(x, tx, i) - s.x) * rstd);
  }
  sg = blockSum(sg);
  sgx = blockSum(sgx);
  if (threadIdx.x == 0) {
    if (dw)
      st(dw, tdw, c, sgx);
    if (db)
      st(db, tdb, c, sg);
  }
  if (!dx)
    return;
  float wc = ld(w, tw, c);
  float mgw = sg * wc / float(n), mgwx = sgx * wc / float(n);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    int64_t i = at(g, c, j);
    float xhat = (ld(x, tx, i) - s.x) * rstd;
    st(dx, tdx, i, rstd * (ld(gy, tg, i) * wc - mgw - xhat * mgwx));
  }
}

} // namespace

void batchNormKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.batch_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef &rm = required(op, in, 1), &rv = required(op, in, 2);
  const TensorRef &w = required(op, in, 3), &b = required(op, in, 4);
  BatchNormGeometry g = batchNormGeometry(op, x, {&rm, &rv, &w, &b});
  if (rm.dtype != DType::F32 || rv.dtype != DType::F32)
    fail(op, "running statistics must be f32");
  if (g.channels == 0 || g.count() == 0)
    return;
  batchNormChannels<<<unsigned(g.channels), kThreads, 0, stream>>>(
      x.data, int(x.dtype), static_cast<float *>(rm.data),
      static_cast<float *>(rv.data), w.data, int(w.dtype), b.data,
      int(b.dtype), y.data, int(y.dtype), g,
      float(attrs.getFloat("eps", 1e-5)), attrs.getFloat("momentum", 0.1),
      attrs.getBool("training", true));
  checkLaunch(op.data());
}

void batchNormBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.batch_norm_backward";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &gy = required(op, in, 2);
  const TensorRef *dx = optional(out, 0), *dw = optional(out, 1),
                  *db = optional(out, 2);
  BatchNormGeometry g = batchNormGeometry(op, x, {&w, dw, db});
  if (gy.numel() != x.numel() || (dx && dx->numel() != x.numel()))
    fail(op, "g and dx must have x's shape");
  if (g.channels == 0 || g.count() == 0)
    return;
  batchNormBackwardChannels<<<unsigned(g.channels), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w.data, int(w.dtype), gy.data, int(gy.dtype),
      dx ? dx->data : nullptr, dx ? int(dx->dtype) : 0,
      dw ? dw->data : nullptr, dw ? int(dw->dtype) : 0,
      db ? db->data : nullptr, db ? int(db->dtype) : 0, g,
      float(attrs.getFloat("eps", 1e-5)));
  checkLaunch(op.data());
}

} // namespace ampc::cuda
