//===- LossIndex.cu - nll/bce losses, argmax, gather, cumsum --------------===//
//
// FP32 math on any input type. Loss sums are taken by one block in a fixed
// order, so they are deterministic run to run. Labels stay on the device:
// an out-of-range label counts as ignored here (the training binary checks
// the data on the host before it gets here).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/kernels/LossIndexGeometry.h"
#include "runtime/numerics/LossIndex.h"

#include <algorithm>

namespace ampc::cuda {

using namespace detail;
using kernels::detail::AxisSplit;
using kernels::detail::BceShape;
using kernels::detail::GatherShape;
using kernels::detail::NllShape;
using kernels::detail::Reduction;
using kernels::detail::SoftCeShape;

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ bool labelOk(int64_t y, int64_t ignore,
                                        int64_t classes) {
  return y != ignore && y >= 0 && y < classes;
}

// One block: the sum of -x[r, y_r] over counted rows (x may be null: count
// only) and their count; the loss (mean or sum) into y, the count into
// |countOut| when given.
__global__ void nllSum(const void *x, int tx, const void *labels, int tl,
                       int64_t rows, int64_t classes, int64_t ignore,
                       bool mean, void *y, int ty, float *countOut) {
  float s = 0.0f, k = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    int64_t c = ldId(labels, tl, r);
    if (labelOk(c, ignore, classes)) {
      if (x)
        s -= ld(x, tx, r * classes + c);
      k += 1.0f;
    }
  }
  s = blockSum(s);
  k = blockSum(k);
  if (threadIdx.x == 0) {
    if (countOut)
      *countOut = k;
    if (y)
      st(y, ty, 0, mean ? s / k : s);
  }
}

// reduction = "none": one loss per row.
__global__ void nllRows(const void *x, int tx, const void *labels, int tl,
                        int64_t rows, int64_t classes, int64_t ignore, void *y,
                        int ty) {
  AMPC_GRID_STRIDE(r, rows) {
    int64_t c = ldId(labels, tl, r);
    st(y, ty, r,
       labelOk(c, ignore, classes) ? -ld(x, tx, r * classes + c) : 0.0f);
  }
}

// dinput: -w at each counted row's label, 0 elsewhere; w = g_r ("none"),
// g / count ("mean") or g ("sum").
__global__ void nllBackward(const void *labels, int tl, const void *g, int tg,
                            const float *count, int reduction, int64_t rows,
                            int64_t classes, int64_t ignore, void *dx,
                            int tdx) {
  AMPC_GRID_STRIDE(i, rows * classes) {
    int64_t r = i / classes, c = ldId(labels, tl, r);
    float v = 0.0f;
    if (c == i % classes && labelOk(c, ignore, classes)) {
      float w = reduction == int(Reduction::None) ? ld(g, tg, r)
                : reduction == int(Reduction::Mean) ? ld(g, tg, 0) / *count
                                                    : ld(g, tg, 0);
      v = -w;
    }
    st(dx, tdx, i, v);
  }
}

} // namespace

void nllLossKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs,
                   cudaStream_t stream) {
  constexpr std::string_view op = "graph.nll_loss";
  const TensorRef &x = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  NllShape s = kernels::detail::nllLossShape(op, x, lab, y, attrs);
  if (s.reduction == Reduction::None) {
    if (s.rows > 0)
      nllRows<<<gridFor(s.rows), kThreads, 0, stream>>>(
          x.data, int(x.dtype), lab.data, int(lab.dtype), s.rows, s.classes,
          s.ignore, y.data, int(y.dtype));
  } else {
    nllSum<<<1, 1024, 0, stream>>>(x.data, int(x.dtype), lab.data,
                                   int(lab.dtype), s.rows, s.classes, s.ignore,
                                   s.reduction == Reduction::Mean, y.data,
                                   int(y.dtype), nullptr);
  }
  checkLaunch(op.data());
}

void nllLossBackwardKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out, const Attrs &attrs,
                           cudaStream_t stream) {
  constexpr std::string_view op = "graph.nll_loss_backward";
  const TensorRef &lab = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  NllShape s = kernels::detail::nllLossBackwardShape(op, lab, g, dx, attrs);
  auto *count = static_cast<float *>(scratch(sizeof(float), op, stream));
  nllSum<<<1, 1024, 0, stream>>>(nullptr, 0, lab.data, int(lab.dtype), s.rows,
                                 s.classes, s.ignore, false, nullptr, 0,
                                 count);
  if (s.rows * s.classes > 0)
    nllBackward<<<gridFor(s.rows * s.classes), kThreads, 0, stream>>>(
        lab.data, int(lab.dtype), g.data, int(g.dtype), count,
        int(s.reduction), s.rows, s.classes, s.ignore, dx.data, int(dx.dtype));
  checkLaunch(op.data());
}

namespace {

// BCE per element, or block partial sums of it (pos_weight: w, count nw).
__global__ void bceElements(const void *x, int tx, const void *t, int tt,
                            const void *w, int tw, int64_t nw, int64_t n,
                            void *y, int ty, float *partial) {
  float s = 0.0f;
  AMPC_GRID_STRIDE(i, n) {
    float pw = w ? ld(w, tw, i % nw) : 1.0f;
    float l = num::bceWithLogits(ld(x, tx, i), ld(t, tt, i), pw);
    if (partial)
      s += l;
    else
      st(y, ty, i, l);
  }
  if (partial) {
    s = blockSum(s);
    if (threadIdx.x == 0)
      partial[blockIdx.x] = s;
  }
}

// Soft-label cross entropy, one block per row: -sum_c t'_c (x_c - lse).
__global__ void softCeRows(const void *x, int tx, const void *t, int tt,
                           int64_t c, float keep, float uniform, float *row) {
  int64_t r = blockIdx.x, base = r * c;
  float lse = rowLogSumExp(x, tx, base, c), s = 0.0f;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    s -= (keep * ld(t, tt, base + j) + uniform) * (ld(x, tx, base + j) - lse);
  s = blockSum(s);
  if (threadIdx.x == 0)
    row[r] = s;
}

// One thread per (outer, inner) position: first maximum, NaN wins.
__global__ void argmaxRows(const void *x, int tx, int64_t outer, int64_t n,
                           int64_t inner, int64_t *y) {
  AMPC_GRID_STRIDE(p, outer * inner) {
    int64_t o = p / inner, i = p % inner, base = o * n * inner + i, best = 0;
    float m = ld(x, tx, base);
    for (int64_t j = 1; j < n && !isnan(m); ++j) {
      float v = ld(x, tx, base + j * inner);
      if (v > m || isnan(v))
        m = v, best = j;
    }
    y[p] = best;
  }
}

// The input offset of index element k; -1 when its value is out of range.
__device__ int64_t gatherOffset(const GatherShape &s, const void *index,
                                int ti, int64_t k) {
  int64_t v = ldId(index, ti, k);
  if (v < 0 || v >= s.xDims[s.axis])
    return -1;
  int64_t off = 0, stride = 1, rest = k;
  for (int d = s.rank - 1; d >= 0; --d) {
    int64_t id = rest % s.iDims[d];
    rest /= s.iDims[d];
    off += (d == s.axis ? v : id) * stride;
    stride *= s.xDims[d];
  }
  return off;
}

__global__ void gatherElements(GatherShape s, const void *x, int tx,
                               const void *index, int ti, int64_t n, void *y,
                               int ty) {
  AMPC_GRID_STRIDE(k, n) {
    int64_t off = gatherOffset(s, index, ti, k);
    st(y, ty, k, off < 0 ? NAN : ld(x, tx, off));
  }
}

// Scatter-add with float atomics into an FP32 buffer: the order of the
// additions (and so the last bits of a repeated index) varies run to run.
__global__ void gatherScatter(GatherShape s, const void *index, int ti,
                              const void *g, int tg, int64_t n, float *acc) {
  AMPC_GRID_STRIDE(k, n) {
    int64_t off = gatherOffset(s, index, ti, k);
    if (off >= 0)
      atomicAdd(acc + off, ld(g, tg, k));
  }
}

__global__ void narrowFloats(const float *src, int64_t n, void *y, int ty) {
  AMPC_GRID_STRIDE(i, n) { st(y, ty, i, src[i]); }
}

// One thread per (outer, inner) line: the running sum in float.
__global__ void cumsumLines(const void *x, int tx, int64_t outer, int64_t n,
                            int64_t inner, bool reverse, void *y, int ty) {
  AMPC_GRID_STRIDE(p, outer * inner) {
    int64_t o = p / inner, i = p % inner;
    float run = 0.0f;
    for (int64_t jj = 0; jj < n; ++jj) {
      int64_t j = reverse ? n - 1 - jj : jj;
      int64_t k = (o * n + j) * inner + i;
      run += ld(x, tx, k);
      st(y, ty, k, run);
    }
  }
}

} // namespace

void binaryCrossEntropyWithLogitsKernel(std::span<const TensorRef> in,
                                        std::span<const TensorRef> out,
                                        const Attrs &attrs,
                                        cudaStream_t stream) {
  constexpr std::string_view op = "graph.binary_cross_entropy_with_logits";
  const TensorRef &x = required(op, in, 0), &t = required(op, in, 1);
  const TensorRef *pw = optional(in, 2);
  const TensorRef &y = required(op, out, 0);
  BceShape s = kernels::detail::bceShape(op, x, t, pw, y, attrs);
  const void *w = pw ? pw->data : nullptr;
  int tw = pw ? int(pw->dtype) : 0;
  if (s.reduction == Reduction::None) {
    if (s.n > 0)
      bceElements<<<gridFor(s.n), kThreads, 0, stream>>>(
          x.data, int(x.dtype), t.data, int(t.dtype), w, tw, s.weights, s.n,
          y.data, int(y.dtype), nullptr);
    checkLaunch(op.data());
    return;
  }
  int blocks = std::max(1, std::min(gridFor(s.n), 1024));
  auto *partial = static_cast<float *>(
      scratch(size_t(blocks) * sizeof(float), op, stream));
  bceElements<<<blocks, kThreads, 0, stream>>>(
      x.data, int(x.dtype), t.data, int(t.dtype), w, tw, s.weights, s.n,
      nullptr, 0, partial);
  sumPartials<<<1, 1024, 0, stream>>>(
      partial, blocks, s.reduction == Reduction::Mean ? float(s.n) : 1.0f,
      y.data, int(y.dtype));
  checkLaunch(op.data());
}

void softCrossEntropy(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream) {
  constexpr std::string_view op = "graph.cross_entropy";
  const TensorRef &z = required(op, in, 0), &t = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  SoftCeShape s = kernels::detail::softCrossEntropyShape(op, z, t, y, attrs);
  auto *rows = static_cast<float *>(
      scratch(size_t(std::max<int64_t>(s.rows, 1)) * sizeof(float), op,
              stream));
  if (s.rows > 0)
    softCeRows<<<unsigned(s.rows), kThreads, 0, stream>>>(
        z.data, int(z.dtype), t.data, int(t.dtype), s.classes,
        float(1.0 - s.smoothing), float(s.smoothing / double(s.classes)),
        rows);
  sumPartials<<<1, 1024, 0, stream>>>(rows, int(s.rows), float(s.rows),
                                      y.data, int(y.dtype));
  checkLaunch(op.data());
}

void argmaxKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.argmax";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  AxisSplit s = kernels::detail::argmaxShape(op, x, y, attrs);
  if (s.outer * s.inner > 0)
    argmaxRows<<<gridFor(s.outer * s.inner), kThreads, 0, stream>>>(
        x.data, int(x.dtype), s.outer, s.n, s.inner,
        static_cast<int64_t *>(y.data));
  checkLaunch(op.data());
}

void gatherKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.gather";
  const TensorRef &x = required(op, in, 0), &index = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  GatherShape s = kernels::detail::gatherShape(op, x, index, y, attrs);
  int64_t n = index.numel();
  if (n > 0)
    gatherElements<<<gridFor(n), kThreads, 0, stream>>>(
        s, x.data, int(x.dtype), index.data, int(index.dtype), n, y.data,
        int(y.dtype));
  checkLaunch(op.data());
}

void gatherBackwardKernel(std::span<const TensorRef> in,
                          std::span<const TensorRef> out, const Attrs &attrs,
                          cudaStream_t stream) {
  constexpr std::string_view op = "graph.gather_backward";
  const TensorRef &index = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  GatherShape s = kernels::detail::gatherShape(op, dx, index, g, attrs);
  int64_t n = index.numel(), m = dx.numel();
  auto *acc = static_cast<float *>(
      scratch(size_t(std::max<int64_t>(m, 1)) * sizeof(float), op, stream));
  cudaMemsetAsync(acc, 0, size_t(m) * sizeof(float), stream);
  if (n > 0)
    gatherScatter<<<gridFor(n), kThreads, 0, stream>>>(
        s, index.data, int(index.dtype), g.data, int(g.dtype), n, acc);
  if (m > 0)
    narrowFloats<<<gridFor(m), kThreads, 0, stream>>>(acc, m, dx.data,
                                                      int(dx.dtype));
  checkLaunch(op.data());
}

void cumsumKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.cumsum";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  AxisSplit s = kernels::detail::cumsumShape(op, x, y, attrs);
  if (s.outer * s.inner > 0)
    cumsumLines<<<gridFor(s.outer * s.inner), kThreads, 0, stream>>>(
        x.data, int(x.dtype), s.outer, s.n, s.inner, attrs.getBool("reverse"),
        y.data, int(y.dtype));
  checkLaunch(op.data());
}

} // namespace ampc::cuda
