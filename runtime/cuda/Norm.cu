//===- Norm.cu - softmax, norms, losses, reductions ------------------------===//
//
// FP32 math on any input type, one rounding per result. One block per row
// (or per output element) with block-wide sums in a fixed order, so every
// result here is deterministic run to run.
//
//===----------------------------------------------------------------------===//
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
  if (x.numel() != y.numel())
    fail(op, "operand and result sizes differ");
  int axis = normAxis(op, attrs.getInt("axis", -1), x.rank);
  int64_t outer = 1, inner = 1, n = x.shape[axis];
  for (int d = 0; d < axis; ++d)
    outer *= x.shape[d];
  for (int d = axis + 1; d < x.rank; ++d)
    inner *= x.shape[d];
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

// --- column sums -----------------------------------------------------------
//
// Sums over the rows of an [m, d] row-major view, two sums per column at
// once. Blocks of 32 columns x 8 row lanes each sum a chunk of rows (the
// lanes combined in a fixed order), then one thread per column adds the
// chunks in order: deterministic, coalesced across the warp, and enough
// blocks for every SM even when d is small. (One thread per column looping
// over all rows gave GPT-2's d = 768 six blocks of latency-bound loads.)

constexpr int kColLanes = 8;

struct ColumnPlan {
  int64_t chunks, rowsPerChunk;
};

ColumnPlan columnPlan(int64_t m, int64_t d) {
  int64_t colBlocks = (d + 31) / 32;
  // About 2048 blocks in all, at least kColLanes rows per chunk.
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(
      2048 / colBlocks, (m + kColLanes - 1) / kColLanes));
  int64_t per = (m + chunks - 1) / chunks;
  return {(m + per - 1) / per, per};
}

// partial[c * d + j] = (sum, sum) of f(r, j) over rows r of chunk c.
template <class F>
__global__ void columnPartials(F f, int64_t m, int64_t d, int64_t rowsPerChunk,
                               float2 *partial) {
  __shared__ float2 lanes[kColLanes][32];
  int64_t j = int64_t(blockIdx.x) * 32 + threadIdx.x;
  int64_t r0 = int64_t(blockIdx.y) * rowsPerChunk;
  int64_t r1 = r0 + rowsPerChunk < m ? r0 + rowsPerChunk : m;
  float2 acc = make_float2(0.0f, 0.0f);
  if (j < d)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kColLanes) {
      float2 v = f(r, j);
      acc.x += v.x;
      acc.y += v.y;
    }
  lanes[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && j < d) {
    for (int l = 1; l < kColLanes; ++l) {
      acc.x += lanes[l][threadIdx.x].x;
      acc.y += lanes[l][threadIdx.x].y;
    }
    partial[int64_t(blockIdx.y) * d + j] = acc;
  }
}

// a[j] = sum.x / divisor, b[j] = sum.y over the chunks (either may be null).
__global__ void columnFinish(const float2 *partial, int64_t chunks, int64_t d,
                             float divisor, void *a, int ta, void *b, int tb) {
  int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= d)
    return;
  float2 s = make_float2(0.0f, 0.0f);
  for (int64_t c = 0; c < chunks; ++c) {
    float2 v = partial[c * d + j];
    s.x += v.x;
    s.y += v.y;
  }
  if (a)
    st(a, ta, j, divisor == 1.0f ? s.x : s.x / divisor);
  if (b)
    st(b, tb, j, s.y);
}

// Bytes of partials columnSums needs (to be carved from the op's scratch).
size_t columnScratch(int64_t m, int64_t d) {
  return size_t(columnPlan(m, d).chunks * d) * sizeof(float2);
}

template <class F>
void columnSums(F f, int64_t m, int64_t d, float2 *partial, float divisor,
                void *a, int ta, void *b, int tb, cudaStream_t stream) {
  ColumnPlan p = columnPlan(m, d);
  columnPartials<<<dim3(unsigned((d + 31) / 32), unsigned(p.chunks)),
                   dim3(32, kColLanes), 0, stream>>>(f, m, d, p.rowsPerChunk,
                                                     partial);
  columnFinish<<<unsigned((d + 255) / 256), 256, 0, stream>>>(
      partial, p.chunks, d, divisor, a, ta, b, tb);
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

// (x, 0): plain column sums (reduce_sum / reduce_mean over leading axes).
struct ColumnValues {
  const void *x;
  int tx;
  int64_t d;
  __device__ float2 operator()(int64_t r, int64_t j) const {
    return make_float2(ld(x, tx, r * d + j), 0.0f);
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
  int64_t m = kernels::detail::lastDimRows(op, x, d, {&w, dw, db});
  if (g.numel() != x.numel() || (dx && dx->numel() != x.numel()))
    fail(op, "g and dx must have x's shape");
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
  float eps = float(attrs.getFloat("eps", rms ? 1e-6 : 1e-5));
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

// --- cross entropy ----------------------------------------------------------

// Per row: lse, and the row's nll and smoothing terms (0 when ignored).
__global__ void ceRows(const void *x, int tx, const void *labels, int tl,
                       int64_t c, int64_t ignore, float *lse, float *nll,
                       float *smooth, float *counted) {
  int64_t r = blockIdx.x, base = r * c;
  int64_t y = ldId(labels, tl, r);
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    mx = fmaxf(mx, ld(x, tx, base + j));
  mx = blockMax(mx);
  float s = 0.0f, sx = 0.0f;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
    float v = ld(x, tx, base + j);
    s += expf(v - mx);
    sx += v;
  }
  s = blockSum(s);
  sx = blockSum(sx);
  if (threadIdx.x == 0) {
    float l = mx + logf(s);
    lse[r] = l;
    bool ok = y != ignore && y >= 0 && y < c;
    nll[r] = ok ? l - ld(x, tx, base + y) : 0.0f;
    smooth[r] = ok ? float(c) * l - sx : 0.0f; // -sum_j (x_j - lse)
    counted[r] = ok ? 1.0f : 0.0f;
  }
}

// Sums of the per-row terms in row order by one block; the loss.
__global__ void ceFinish(const float *nll, const float *smooth,
                         const float *counted, int64_t rows, double ls,
                         int64_t c, void *y, int ty, float *countOut) {
  float a = 0.0f, b = 0.0f, k = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    a += nll[r];
    b += smooth[r];
    k += counted[r];
  }
  a = blockSum(a);
  b = blockSum(b);
  k = blockSum(k);
  if (threadIdx.x == 0) {
    if (countOut)
      *countOut = k;
    if (y) {
      float loss = a / k;
      if (ls > 0.0)
        loss = float(1.0 - ls) * loss + (b / k) * float(ls / double(c));
      st(y, ty, 0, loss);
    }
  }
}

__global__ void ceBackwardRows(const void *x, int tx, const void *labels,
                               int tl, const void *g, int tg,
                               const float *lse, const float *count, void *dx,
                               int tdx, int64_t c, int64_t ignore, float hit,
                               float uniform) {
  int64_t r = blockIdx.x, base = r * c;
  int64_t y = ldId(labels, tl, r);
  bool ok = y != ignore && y >= 0 && y < c;
  float coef = ld(g, tg, 0) / *count;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
    float t = 0.0f;
    if (ok) {
      t = expf(ld(x, tx, base + j) - lse[r]) - uniform;
      if (j == y)
        t -= hit;
      t = coef * t;
    }
    st(dx, tdx, base + j, t);
  }
}

struct Ce {
  int64_t rows, classes, ignore;
  double smoothing;
  float *lse, *nll, *smooth, *counted, *count;
};

Ce ceSetup(std::string_view op, const TensorRef &logits, const TensorRef &lab,
           const Attrs &attrs, cudaStream_t stream) {
  if (logits.rank < 1)
    fail(op, "logits must be [..., C]");
  Ce p{lab.numel(), logits.shape[logits.rank - 1],
       attrs.getInt("ignore_index", -100),
       attrs.getFloat("label_smoothing", 0.0), nullptr, nullptr, nullptr,
       nullptr, nullptr};
  if (p.rows * p.classes != logits.numel())
    fail(op, "labels must have the logits' shape without the class axis");
  auto *s = static_cast<float *>(
      scratch(size_t(4 * p.rows + 1) * sizeof(float), op, stream));
  p.lse = s, p.nll = s + p.rows, p.smooth = s + 2 * p.rows,
  p.counted = s + 3 * p.rows, p.count = s + 4 * p.rows;
  if (p.rows > 0) // a grid of 0 blocks is a launch error; ceFinish gives NaN
    ceRows<<<unsigned(p.rows), kThreads, 0, stream>>>(
      logits.data, int(logits.dtype), lab.data, int(lab.dtype), p.classes,
      p.ignore, p.lse, p.nll, p.smooth, p.counted);
  return p;
}

// --- reductions ---------------------------------------------------------------

struct Reduce {
  int keptRank, redRank;
  int64_t keptDims[kMaxRank], keptStrides[kMaxRank];
  int64_t redDims[kMaxRank], redStrides[kMaxRank];
  int64_t count; // elements per output
  bool leading;  // the reduced axes are the leading ones: column sums
};

Reduce reduction(std::string_view op, const TensorRef &x, const TensorRef &y,
                 const Attrs &attrs) {
  auto axes = attrs.getInts("axes", {});
  bool reduced[kMaxRank] = {};
  if (axes.empty())
    for (int d = 0; d < x.rank; ++d)
      reduced[d] = true;
  for (int64_t a : axes)
    reduced[normAxis(op, a, x.rank)] = true;
  Reduce r{};
  r.count = 1;
  r.leading = true;
  int64_t stride = 1, kept = 1;
  int64_t strides[kMaxRank];
  for (int d = x.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= x.shape[d];
  }
  for (int d = 0; d < x.rank; ++d) {
    if (reduced[d]) {
      r.leading &= r.keptRank == 0;
      r.redDims[r.redRank] = x.shape[d];
      r.redStrides[r.redRank++] = strides[d];
      r.count *= x.shape[d];
    } else {
      r.keptDims[r.keptRank] = x.shape[d];
      r.keptStrides[r.keptRank++] = strides[d];
      kept *= x.shape[d];
    }
  }
  if (kept != y.numel())
    fail(op, "result size does not match the reduction");
  return r;
}

__device__ int64_t offsetOf(int64_t i, int rank, const int64_t *dims,
                            const int64_t *strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return off;
}

// One block per output element. kind: 0 sum, 1 mean, 2 max. With |count|
// (max only), also the number of elements equal to the max.
__global__ void reduceKernel(Reduce r, const void *x, int tx, void *y, int ty,
                             int kind, float *maxOut, float *tiesOut) {
  int64_t base = offsetOf(blockIdx.x, r.keptRank, r.keptDims, r.keptStrides);
  float acc = kind == 2 ? -INFINITY : 0.0f;
  bool nan = false;
  for (int64_t k = threadIdx.x; k < r.count; k += blockDim.x) {
    float v = ld(x, tx, base + offsetOf(k, r.redRank, r.redDims, r.redStrides));
    if (kind == 2) {
      nan |= isnan(v);
      acc = fmaxf(acc, v);
    } else {
      acc += v;
    }
  }
  if (kind == 2) {
    acc = blockMax(acc);
    nan = blockSum(nan ? 1.0f : 0.0f) > 0.0f;
    if (nan)
      acc = NAN; // torch.amax propagates NaN
  } else {
    acc = blockSum(acc);
    if (kind == 1)
      acc /= float(r.count);
  }
  if (tiesOut) {
    float ties = 0.0f;
    for (int64_t k = threadIdx.x; k < r.count; k += blockDim.x)
      ties += ld(x, tx, base + offsetOf(k, r.redRank, r.redDims,
                                        r.redStrides)) == acc
                  ? 1.0f
                  : 0.0f;
    ties = blockSum(ties);
    if (threadIdx.x == 0) {
      maxOut[blockIdx.x] = acc;
      tiesOut[blockIdx.x] = ties;
    }
  }
  if (y && threadIdx.x == 0)
    st(y, ty, blockIdx.x, acc);
}

__global__ void reduceMaxBackwardKernel(Reduce r, const void *x, int tx,
                                        const void *g, int tg,
                                        const float *mx, const float *ties,
                                        void *dx, int tdx) {
  int64_t o = blockIdx.x;
  int64_t base = offsetOf(o, r.keptRank, r.keptDims, r.keptStrides);
  float share = ld(g, tg, o) / ties[o];
  for (int64_t k = threadIdx.x; k < r.count; k += blockDim.x) {
    int64_t off = base + offsetOf(k, r.redRank, r.redDims, r.redStrides);
    st(dx, tdx, off, ld(x, tx, off) == mx[o] ? share : 0.0f);
  }
}

void reduce(std::string_view op, int kind, std::span<const TensorRef> in,
            std::span<const TensorRef> out, const Attrs &attrs,
            cudaStream_t stream) {
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  Reduce r = reduction(op, x, y, attrs);
  if (y.numel() == 0)
    return;
  if (kind != 2 && r.leading && r.count > 0) {
    // Bias gradients (sums over batch and sequence): column sums.
    auto *partial = static_cast<float2 *>(
        scratch(columnScratch(r.count, y.numel()), op, stream));
    columnSums(ColumnValues{x.data, int(x.dtype), y.numel()}, r.count,
               y.numel(), partial, kind == 1 ? float(r.count) : 1.0f, y.data,
               int(y.dtype), nullptr, 0, stream);
    checkLaunch(op.data());
    return;
  }
  reduceKernel<<<unsigned(y.numel()), kThreads, 0, stream>>>(
      r, x.data, int(x.dtype), y.data, int(y.dtype), kind, nullptr, nullptr);
  checkLaunch(op.data());
}

// Sum of (a - b)^2 in blocks, then one block sums the partials in order.
__global__ void sqDiffPartials(const void *a, int ta, const void *b, int tb,
                               int64_t n, float *partial) {
  float s = 0.0f;
  AMPC_GRID_STRIDE(i, n) {
    float d = ld(a, ta, i) - ld(b, tb, i);
    s += d * d;
  }
  s = blockSum(s);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = s;
}

__global__ void meanOfPartials(const float *partial, int count, int64_t n,
                               void *y, int ty) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    s += partial[i];
  s = blockSum(s);
  if (threadIdx.x == 0)
    st(y, ty, 0, s / float(n));
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
      nullptr, 0, y.data, int(y.dtype), d, float(attrs.getFloat("eps", 1e-6)),
      true, nullptr);
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

void crossEntropyKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs,
                        cudaStream_t stream) {
  constexpr std::string_view op = "graph.cross_entropy";
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  if (y.numel() != 1)
    fail(op, "the result is a scalar");
  Ce p = ceSetup(op, logits, lab, attrs, stream);
  ceFinish<<<1, 1024, 0, stream>>>(p.nll, p.smooth, p.counted, p.rows,
                                   p.smoothing, p.classes, y.data,
                                   int(y.dtype), nullptr);
  checkLaunch(op.data());
}

void crossEntropyBackwardKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.cross_entropy_backward";
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &g = required(op, in, 2), &dx = required(op, out, 0);
  if (g.numel() != 1 || dx.numel() != logits.numel())
    fail(op, "g is a scalar and dlogits has the logits' shape");
  Ce p = ceSetup(op, logits, lab, attrs, stream);
  ceFinish<<<1, 1024, 0, stream>>>(p.nll, p.smooth, p.counted, p.rows,
                                   p.smoothing, p.classes, nullptr, 0,
                                   p.count);
  if (p.rows > 0)
    ceBackwardRows<<<unsigned(p.rows), kThreads, 0, stream>>>(
      logits.data, int(logits.dtype), lab.data, int(lab.dtype), g.data,
      int(g.dtype), p.lse, p.count, dx.data, int(dx.dtype), p.classes,
      p.ignore, float(1.0 - p.smoothing),
      float(p.smoothing / double(p.classes)));
  checkLaunch(op.data());
}

void mseLossKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &,
                   cudaStream_t stream) {
  constexpr std::string_view op = "graph.mse_loss";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  if (a.numel() != b.numel() || y.numel() != 1)
    fail(op, "operands must have equal sizes; the result is a scalar");
  int blocks = std::min(gridFor(a.numel()), 1024);
  auto *partial = static_cast<float *>(
      scratch(size_t(blocks) * sizeof(float), op, stream));
  sqDiffPartials<<<blocks, kThreads, 0, stream>>>(
      a.data, int(a.dtype), b.data, int(b.dtype), a.numel(), partial);
  meanOfPartials<<<1, 1024, 0, stream>>>(partial, blocks, a.numel(), y.data,
                                         int(y.dtype));
  checkLaunch(op.data());
}

void reduceSumKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  reduce("graph.reduce_sum", 0, in, out, attrs, stream);
}

void reduceMeanKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream) {
  reduce("graph.reduce_mean", 1, in, out, attrs, stream);
}

void reduceMaxKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  reduce("graph.reduce_max", 2, in, out, attrs, stream);
}

// in: x, g. dx: g shared evenly among tied maxima (torch.amax).
void reduceMaxBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.reduce_max_backward";
  const TensorRef &x = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  if (dx.numel() != x.numel())
    fail(op, "dx must have x's shape");
  Reduce r = reduction(op, x, g, attrs);
  int64_t outs = g.numel();
  if (outs == 0)
    return;
  auto *s = static_cast<float *>(
      scratch(size_t(2 * outs) * sizeof(float), op, stream));
  reduceKernel<<<unsigned(outs), kThreads, 0, stream>>>(
      r, x.data, int(x.dtype), nullptr, 0, 2, s, s + outs);
  reduceMaxBackwardKernel<<<unsigned(outs), kThreads, 0, stream>>>(
      r, x.data, int(x.dtype), g.data, int(g.dtype), s, s + outs, dx.data,
      int(dx.dtype));
  checkLaunch(op.data());
}

} // namespace ampc::cuda
