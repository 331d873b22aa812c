//===- GroupNorm.cu - group_norm and its backward -------------------------===//
//
// One block per (sample, group), a contiguous run of x: block sums in a
// fixed order, FP32 math, one rounding per result. The backward keeps each
// group's (mean, rstd) in library scratch and sums the weight and bias
// gradients with one block per channel: deterministic run to run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/kernels/BatchNorm.h"

namespace ampc::cuda {

using namespace detail;
using kernels::detail::GroupNormGeometry;
using kernels::detail::groupNormGeometry;

namespace {

constexpr int kThreads = 256;

// (mean, rstd) of the run of |len| elements at |base|.
__device__ float2 runStats(const void *x, int tx, int64_t base, int64_t len,
                           float eps) {
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
    s += ld(x, tx, base + j);
  float mean = blockSum(s) / float(len);
  float v = 0.0f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    float d = ld(x, tx, base + j) - mean;
    v += d * d;
  }
  return {mean, 1.0f / sqrtf(blockSum(v) / float(len) + eps)};
}

__global__ void groupNormRuns(const void *x, int tx, const void *w, int tw,
                              const void *b, int tb, void *y, int ty,
                              GroupNormGeometry g, float eps) {
  int64_t run = blockIdx.x, len = g.groupSize(), base = run * len;
  int64_t grp = run % g.groups;
  float2 s = runStats(x, tx, base, len, eps);
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    int64_t c = grp * g.perGroup + j / g.spatial;
    st(y, ty, base + j,
       (ld(x, tx, base + j) - s.x) * s.y * ld(w, tw, c) + ld(b, tb, c));
  }
}

// Statistics of every run, and dx when asked.
__global__ void groupNormBackwardRuns(const void *x, int tx, const void *w,
                                      int tw, const void *gy, int tg, void *dx,
                                      int tdx, float2 *stats,
                                      GroupNormGeometry g, float eps) {
  int64_t run = blockIdx.x, len = g.groupSize(), base = run * len;
  int64_t grp = run % g.groups;
  float2 s = runStats(x, tx, base, len, eps);
  if (threadIdx.x == 0)
    stats[run] = s;
  if (!dx)
    return;
  float sgw = 0.0f, sgwx = 0.0f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    int64_t c = grp * g.perGroup + j / g.spatial;
    float gw = ld(gy, tg, base + j) * ld(w, tw, c);
    sgw += gw;
    sgwx += gw * ((ld(x, tx, base + j) - s.x) * s.y);
  }
  float mgw = blockSum(sgw) / float(len), mgwx = blockSum(sgwx) / float(len);
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    int64_t c = grp * g.perGroup + j / g.spatial;
    float xhat = (ld(x, tx, base + j) - s.x) * s.y;
    st(dx, tdx, base + j,
       s.y * (ld(gy, tg, base + j) * ld(w, tw, c) - mgw - xhat * mgwx));
  }
}

// dweight and dbias of channel blockIdx.x over every sample.
__global__ void groupNormParamSums(const void *x, int tx, const void *gy,
                                   int tg, const float2 *stats, void *dw,
                                   int tdw, void *db, int tdb,
                                   GroupNormGeometry g) {
  int64_t c = blockIdx.x, grp = c / g.perGroup;
  int64_t channels = g.groups * g.perGroup, n = g.batch * g.spatial;
  float sx = 0.0f, s1 = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    int64_t b = j / g.spatial, k = j % g.spatial;
    int64_t i = (b * channels + c) * g.spatial + k;
    float2 s = stats[b * g.groups + grp];
    float gi = ld(gy, tg, i);
    sx += gi * ((ld(x, tx, i) - s.x) * s.y);
    s1 += gi;
  }
  sx = blockSum(sx);
  s1 = blockSum(s1);
  if (threadIdx.x == 0) {
    if (dw)
      st(dw, tdw, c, sx);
    if (db)
      st(db, tdb, c, s1);
  }
}

} // namespace

void groupNormKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.group_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef &w = required(op, in, 1), &b = required(op, in, 2);
  GroupNormGeometry g =
      groupNormGeometry(op, x, attrs.getInt("num_groups"), {&w, &b});
  if (g.batch * g.groups == 0 || g.groupSize() == 0)
    return;
  groupNormRuns<<<unsigned(g.batch * g.groups), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w.data, int(w.dtype), b.data, int(b.dtype),
      y.data, int(y.dtype), g, float(attrs.getFloat("eps", 1e-5)));
  checkLaunch(op.data());
}

void groupNormBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.group_norm_backward";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &gy = required(op, in, 2);
  const TensorRef *dx = optional(out, 0), *dw = optional(out, 1),
                  *db = optional(out, 2);
  GroupNormGeometry g =
      groupNormGeometry(op, x, attrs.getInt("num_groups"), {&w, dw, db});
  if (gy.numel() != x.numel() || (dx && dx->numel() != x.numel()))
    fail(op, "g and dx must have x's shape");
  int64_t runs = g.batch * g.groups;
  if (runs == 0 || g.groupSize() == 0)
    return;
  auto *stats = static_cast<float2 *>(
      scratch(size_t(runs) * sizeof(float2), op, stream));
  groupNormBackwardRuns<<<unsigned(runs), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w.data, int(w.dtype), gy.data, int(gy.dtype),
      dx ? dx->data : nullptr, dx ? int(dx->dtype) : 0, stats, g,
      float(attrs.getFloat("eps", 1e-5)));
  if (dw || db)
    groupNormParamSums<<<unsigned(g.groups * g.perGroup), kThreads, 0,
                         stream>>>(x.data, int(x.dtype), gy.data,
                                   int(gy.dtype), stats,
                                   dw ? dw->data : nullptr,
                                   dw ? int(dw->dtype) : 0,
                                   db ? db->data : nullptr,
                                   db ? int(db->dtype) : 0, g);
  checkLaunch(op.data());
}

} // namespace ampc::cuda
