//===- Norm.cu - softmax, layer norm, RMS norm and their backward ---------===//
//
// FP32 math on any input type, one rounding per result. One block per row,
// block-wide sums in a fixed order, column sums for the weight and bias
// gradients (ColumnSums.cuh): every result here is deterministic run to run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ColumnSums.cuh"
#include "runtime/cuda/Common.cuh"

#include <algorithm>
#include <vector>

namespace ampc::cuda {

using namespace detail;

namespace {

constexpr int kThreads = 256;

// Row (o, i) of an [outer, n, inner] view: elements base + j * inner.
__global__ void softmaxRows(const void *x, int tx, void *y, int ty,
                            int64_t n, int64_t inner, bool log) {
  int64_t row = blockIdx.x, o = row / inner, i = row % inner;
  int64_t base = o * n * inner + i;
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    mx = fmaxf(mx, ld(x, tx, base + j * inner));
  mx = blockMax(mx);
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    s += expf(ld(x, tx, base + j * inner) - mx);
  s = blockSum(s);
  float lse = logf(s);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    float v = ld(x, tx, base + j * inner);
    st(y, ty, base + j * inner, log ? v - mx - lse : expf(v - mx) / s);
  }
}

void softmaxLike(std::string_view op, bool log, std::span<const TensorRef> in,
                 std::span<const TensorRef> out, const Attrs &attrs,
                 cudaStream_t stream) {
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  auto [outer, n, inner] = kernels::detail::softmaxGeometry(op, x, y, attrs);
  if (outer * inner == 0)
    return;
  softmaxRows<<<unsigned(outer * inner), kThreads, 0, stream>>>(
      x.data, int(x.dtype), y.data, int(y.dtype), n, inner, log);
  checkLaunch(op.data());
}

// Layer norm (rms = false) or RMS norm of one row per block. Writes the
// row statistics (mean, rstd) when |stats| is set.
__global__ void normRows(const void *x, int tx, const void *w, int tw,
                         const void *b, int tb, void *y, int ty, int64_t d,
                         float eps, bool rms, float2 *stats) {
  int64_t base = int64_t(blockIdx.x) * d;
  float mean = 0.0f, rstd;
  if (rms) {
    float ss = 0.0f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      float v = ld(x, tx, base + j);
      ss += v * v;
    }
    ss = blockSum(ss);
    rstd = 1.0f / sqrtf(ss / float(d) + eps);
  } else {
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      s += ld(x, tx, base + j);
    mean = blockSum(s) / float(d);
    float var = 0.0f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      float c = ld(x, tx, base + j) - mean;
      var += c * c;
    }
    var = blockSum(var) / float(d);
    rstd = 1.0f / sqrtf(var + eps);
  }
  if (stats && threadIdx.x == 0)
    stats[blockIdx.x] = make_float2(mean, rstd);
  if (!y)
    return;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float v = (ld(x, tx, base + j) - mean) * rstd;
    if (w)
      v *= ld(w, tw, j);
    if (b)
      v += ld(b, tb, j);
    st(y, ty, base + j, v);
  }
}

// dx of one row per block (stats from normRows).
__global__ void normBackwardRows(const void *x, int tx, const void *w, int tw,
                                 const void *g, int tg, void *dx, int tdx,
                                 int64_t d, bool rms, const float2 *stats) {
  int64_t base = int64_t(blockIdx.x) * d;
  float mean = stats[blockIdx.x].x, rstd = stats[blockIdx.x].y;
  float sgw = 0.0f, sgwx = 0.0f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float xhat = (ld(x, tx, base + j) - mean) * rstd;
    float gw = ld(g, tg, base + j) * ld(w, tw, j);
    sgw += gw;
    sgwx += gw * xhat;
  }
  sgw = blockSum(sgw);
  sgwx = blockSum(sgwx);
  float mgw = rms ? 0.0f : sgw / float(d), mgwx = sgwx / float(d);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float xhat = (ld(x, tx, base + j) - mean) * rstd;
    float gw = ld(g, tg, base + j) * ld(w, tw, j);
    st(dx, tdx, base + j, rstd * (gw - mgw - xhat * mgwx));
  }
}

// (g * xhat, g) of row r, column j: the norm's weight and bias gradients.
struct NormParamTerms {
  const void *x, *g;
  int tx, tg;
  const float2 *stats;
  int64_t d;
  __device__ float2 operator()(int64_t r, int64_t j) const {
    float gv = ld(g, tg, r * d + j);
    return make_float2(gv * ((ld(x, tx, r * d + j) - stats[r].x) * stats[r].y),
                       gv);
  }
};

void normBackward(std::string_view op, bool rms, std::span<const TensorRef> in,
                  std::span<const TensorRef> out, const Attrs &attrs,
                  cudaStream_t stream) {
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &g = required(op, in, 2);
  const TensorRef *dx = optional(out, 0), *dw = optional(out, 1),
                  *db = rms ? nullptr : optional(out, 2);
  int64_t d;
  int64_t m = kernels::detail::normBackwardRows(op, x, w, g, dx, dw, db, d);
  if (m == 0) {
    // No rows (a grid of 0 blocks is a launch error): dweight and dbias are
    // empty sums, zero as on the CPU (all-zero bits are +0 in every format).
    for (const TensorRef *t : {dw, db})
      if (t)
        check(cudaMemsetAsync(t->data, 0,
                              size_t(t->numel()) * dtypeSize(t->dtype),
                              stream),
              op.data());
    return;
  }
  float eps =
      float(attrs.getFloat("eps", rms ? kernels::machineEpsilon(x.dtype) : 1e-5));
  size_t statsBytes = (size_t(m) * sizeof(float2) + 255) & ~size_t(255);
  char *s = static_cast<char *>(scratch(
      statsBytes + (dw || db ? columnScratch(m, d) : 0), op, stream));
  auto *stats = reinterpret_cast<float2 *>(s);
  normRows<<<unsigned(m), kThreads, 0, stream>>>(
      x.data, int(x.dtype), nullptr, 0, nullptr, 0, nullptr, 0, d, eps, rms,
      stats);
  if (dx)
    normBackwardRows<<<unsigned(m), kThreads, 0, stream>>>(
        x.data, int(x.dtype), w.data, int(w.dtype), g.data, int(g.dtype),
        dx->data, int(dx->dtype), d, rms, stats);
  if (dw || db)
    columnSums(NormParamTerms{x.data, g.data, int(x.dtype), int(g.dtype), stats, d},
               m, d, reinterpret_cast<float2 *>(s + statsBytes), 1.0f,
               dw ? dw->data : nullptr, dw ? int(dw->dtype) : 0,
               db ? db->data : nullptr, db ? int(db->dtype) : 0, stream);
  checkLaunch(op.data());
}

} // namespace

void softmaxKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                   const Attrs &attrs, cudaStream_t stream) {
  softmaxLike("graph.softmax", false, in, out, attrs, stream);
}

void logSoftmaxKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream) {
  softmaxLike("graph.log_softmax", true, in, out, attrs, stream);
}

void layerNormKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.layer_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef *w = optional(in, 1), *b = optional(in, 2);
  int64_t d;
  int64_t m = kernels::detail::lastDimRows(op, x, d, {w, b});
  if (m == 0)
    return;
  normRows<<<unsigned(m), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w ? w->data : nullptr, w ? int(w->dtype) : 0,
      b ? b->data : nullptr, b ? int(b->dtype) : 0, y.data, int(y.dtype), d,
      float(attrs.getFloat("eps", 1e-5)), false, nullptr);
  checkLaunch(op.data());
}

void rmsNormKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs,
                   cudaStream_t stream) {
  constexpr std::string_view op = "graph.rms_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef *w = optional(in, 1);
  int64_t d;
  int64_t m = kernels::detail::lastDimRows(op, x, d, {w});
  if (m == 0)
    return;
  normRows<<<unsigned(m), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w ? w->data : nullptr, w ? int(w->dtype) : 0,
      nullptr, 0, y.data, int(y.dtype), d,
      float(attrs.getFloat("eps", kernels::machineEpsilon(x.dtype))), true, nullptr);
  checkLaunch(op.data());
}

void layerNormBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  normBackward("graph.layer_norm_backward", false, in, out, attrs, stream);
}

void rmsNormBackwardKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out, const Attrs &attrs,
                           cudaStream_t stream) {
  normBackward("graph.rms_norm_backward", true, in, out, attrs, stream);
}

} // namespace ampc::cuda
