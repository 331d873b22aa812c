//===- Loss.cu - cross entropy and MSE loss -------------------------------===//
//
// FP32 math on any input type; per-row terms summed in row order by one
// block, so the loss is deterministic run to run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/cuda/Packed.cuh"
#include "runtime/kernels/EnvSwitch.h"
#include "runtime/numerics/Elementwise.h"

#include <algorithm>

namespace ampc::cuda {

using namespace detail;

namespace {

constexpr int kThreads = 256;
// Cross-entropy's row kernels: one block per row, which each sweeps two or
// three times. At 1024 threads two blocks fit an SM, so the rows in flight
// (264 on an H200, 26 MB of bf16 GPT-2 logits) stay in L2 between sweeps; at
// 256 threads eight did, 105 MB, and the re-reads went back to memory.
constexpr int kRowThreads = 1024;

// Cross-entropy's rows in 16-byte packs (Packed.cuh), where every row starts
// 16-byte aligned (a class count that is a multiple of 8, which
// graph-pad-classes makes GPT-2's): one load brings 8 classes instead of
// one, so a row's sweeps keep enough bytes in flight to stream.
// AMPC_CUDA_CE_ROWS=elements (read at each call) keeps element loads.
bool packedRows(const TensorRef &x, int64_t classes) {
  return classes % kPack == 0 && packedOk(x.data, x.dtype) &&
         kernels::envChoice("AMPC_CUDA_CE_ROWS", {"packed", "elements"}) == 0;
}

// rowLogSumExp with thread t taking packs t, t + blockDim.x, ... and each
// pack's classes in order: another summation order than the element-
// strided one, which every cross-entropy kernel takes alike when
// |packed| (packedRows of the logits), so they still agree bitwise.
template <bool kSumX = false>
__device__ __forceinline__ float rowLse(bool packed, const void *x, int tx,
                                        int64_t base, int64_t c,
                                        float *sumX = nullptr) {
  if (!packed)
    return rowLogSumExp<kSumX>(x, tx, base, c, sumX);
  const int64_t step = int64_t(blockDim.x) * kPack;
  float mx = -INFINITY;
  for (int64_t p = int64_t(threadIdx.x) * kPack; p < c; p += step) {
    float v[kPack];
    ld8(x, tx, base + p, true, kPack, v);
#pragma unroll
    for (int k = 0; k < kPack; ++k)
      mx = fmaxf(mx, v[k]);
  }
  mx = blockMax(mx);
  float s = 0.0f, sx = 0.0f;
  for (int64_t p = int64_t(threadIdx.x) * kPack; p < c; p += step) {
    float v[kPack];
    ld8(x, tx, base + p, true, kPack, v);
#pragma unroll
    for (int k = 0; k < kPack; ++k) {
      s += expf(v[k] - mx);
      if constexpr (kSumX)
        sx += v[k];
    }
  }
  s = blockSum(s);
  if constexpr (kSumX)
    *sumX = blockSum(sx);
  return mx + logf(s);
}

// A row's gradient, coef * (exp(x_j - lse) - uniform - hit at the label),
// or zeros (|ok| false: an ignored row). In packs when |packed| (x and dx
// rows aligned), else strided by element; the same value per element either
// way, and each element is read by the thread that writes it (dx may be x).
__device__ __forceinline__ void gradRow(bool packed, bool ok, const void *x,
                                        int tx, void *dx, int tdx,
                                        int64_t base, int64_t c, int64_t y,
                                        float lse, float coef, float hit,
                                        float uniform) {
  if (packed) {
    const int64_t step = int64_t(blockDim.x) * kPack;
    for (int64_t p = int64_t(threadIdx.x) * kPack; p < c; p += step) {
      float v[kPack] = {};
      if (ok) {
        ld8(x, tx, base + p, true, kPack, v);
#pragma unroll
        for (int k = 0; k < kPack; ++k) {
          float t = expf(v[k] - lse) - uniform;
          if (p + k == y)
            t -= hit;
          v[k] = coef * t;
        }
      }
      st8(dx, tdx, base + p, true, kPack, v);
    }
    return;
  }
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
    float t = 0.0f;
    if (ok) {
      t = expf(ld(x, tx, base + j) - lse) - uniform;
      if (j == y)
        t -= hit;
      t = coef * t;
    }
    st(dx, tdx, base + j, t);
  }
}

// Per row: lse, and the row's nll and smoothing terms (0 when ignored).
__global__ void ceRows(const void *x, int tx, const void *labels, int tl,
                       int64_t c, int64_t ignore, float *lse, float *nll,
                       float *smooth, float *counted, bool packed) {
  int64_t r = blockIdx.x, base = r * c;
  int64_t y = ldId(labels, tl, r);
  float sx;
  float l = rowLse<true>(packed, x, tx, base, c, &sx);
  if (threadIdx.x == 0) {
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
                               float uniform, bool packedXD) {
  int64_t r = blockIdx.x, base = r * c;
  int64_t y = ldId(labels, tl, r);
  bool ok = y != ignore && y >= 0 && y < c;
  float coef = ld(g, tg, 0) / *count;
  gradRow(packedXD, ok, x, tx, dx, tdx, base, c, y, lse[r], coef, hit,
          uniform);
}

// The count of rows ceFinish gives the backward (same threads, same order,
// so the same float), without reading the logits.
__global__ void ceCount(const void *labels, int tl, int64_t rows, int64_t c,
                        int64_t ignore, float *count) {
  float k = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    int64_t y = ldId(labels, tl, r);
    k += y != ignore && y >= 0 && y < c ? 1.0f : 0.0f;
  }
  k = blockSum(k);
  if (threadIdx.x == 0)
    *count = k;
}

// ceRows' max and log-sum-exp and ceBackwardRows' gradient in one launch per
// row: the row's later reads come mostly from cache instead of a second
// launch (and lse never goes through memory). The same arithmetic in the
// same order as the two kernels, so bitwise the same dlogits.
__global__ void ceBackwardFused(const void *x, int tx, const void *labels,
                                int tl, const void *g, int tg,
                                const float *count, void *dx, int tdx,
                                int64_t c, int64_t ignore, float hit,
                                float uniform, bool packedX, bool packedXD) {
  int64_t r = blockIdx.x, base = r * c;
  int64_t y = ldId(labels, tl, r);
  bool ok = y != ignore && y >= 0 && y < c; // the same for the whole block
  if (!ok) {
    gradRow(packedXD, false, x, tx, dx, tdx, base, c, y, 0.0f, 0.0f, hit,
            uniform);
    return;
  }
  float lse = rowLse(packedX, x, tx, base, c);
  float coef = ld(g, tg, 0) / *count;
  gradRow(packedXD, true, x, tx, dx, tdx, base, c, y, lse, coef, hit,
          uniform);
}

// cross_entropy_with_grad's row pass: ceRows' per-row terms and
// ceBackwardFused's gradient from one log-sum-exp, so the logits are read
// once (the row's re-reads mostly from cache). dx may be x itself (the
// memory plan writes dlogits over the logits): every element is read by the
// thread that writes it, and the label's logit is read before the barrier
// that precedes the writes. The same arithmetic in the same order as
// ceRows and ceBackwardFused, so bitwise the same loss and dlogits.
__global__ void ceRowsGrad(const void *x, int tx, const void *labels, int tl,
                           const void *g, int tg, const float *count,
                           void *dx, int tdx, int64_t c, int64_t ignore,
                           float hit, float uniform, float *nll,
                           float *smooth, float *counted, bool packedX,
                           bool packedXD) {
  int64_t r = blockIdx.x, base = r * c;
  int64_t y = ldId(labels, tl, r);
  bool ok = y != ignore && y >= 0 && y < c; // the same for the whole block
  float sx;
  float lse = rowLse<true>(packedX, x, tx, base, c, &sx);
  if (threadIdx.x == 0) {
    nll[r] = ok ? lse - ld(x, tx, base + y) : 0.0f;
    smooth[r] = ok ? float(c) * lse - sx : 0.0f;
    counted[r] = ok ? 1.0f : 0.0f;
  }
  __syncthreads(); // x[y] is read before anything is written over it
  float coef = ok ? ld(g, tg, 0) / *count : 0.0f;
  gradRow(packedXD, ok, x, tx, dx, tdx, base, c, y, lse, coef, hit, uniform);
}

// AMPC_CUDA_CE_BACKWARD: unset, "" or "fused": ceCount + ceBackwardFused
// (two launches); "rows": ceRows + ceFinish + ceBackwardRows, the path
// before (kept to isolate a difference on a GPU). Read at each call, so a
// test can run both.
bool ceBackwardFusedPath() {
  return kernels::envChoice("AMPC_CUDA_CE_BACKWARD", {"fused", "rows"}) == 0;
}

struct Ce {
  int64_t rows, classes, ignore;
  double smoothing;
  float *lse, *nll, *smooth, *counted, *count;
};

// |shape|: checked by kernels::detail::crossEntropyForward/Backward.
Ce ceSetup(std::string_view op, const kernels::detail::CrossEntropyShape &shape,
           const TensorRef &logits, const TensorRef &lab, cudaStream_t stream) {
  Ce p{shape.rows, shape.classes, shape.ignore, shape.smoothing, nullptr,
       nullptr, nullptr, nullptr, nullptr};
  auto *s = static_cast<float *>(
      scratch(size_t(4 * p.rows + 1) * sizeof(float), op, stream));
  p.lse = s, p.nll = s + p.rows, p.smooth = s + 2 * p.rows,
  p.counted = s + 3 * p.rows, p.count = s + 4 * p.rows;
  if (p.rows > 0) // a grid of 0 blocks is a launch error; ceFinish gives NaN
    ceRows<<<unsigned(p.rows), kRowThreads, 0, stream>>>(
      logits.data, int(logits.dtype), lab.data, int(lab.dtype), p.classes,
      p.ignore, p.lse, p.nll, p.smooth, p.counted,
      packedRows(logits, p.classes));
  return p;
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

// Regression-loss partial sums per block (l1 / smooth_l1 / huber).
__global__ void regressionPartials(num::RegressionLoss kind, float p,
                                   const void *a, int ta, const void *b,
                                   int tb, int64_t n, float *partial) {
  float s = 0.0f;
  AMPC_GRID_STRIDE(i, n) {
    s += num::regressionLoss(kind, ld(a, ta, i) - ld(b, tb, i), p);
  }
  s = blockSum(s);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = s;
}

// reduction = "none": one loss per element.
__global__ void regressionElements(num::RegressionLoss kind, float p,
                                   const void *a, int ta, const void *b,
                                   int tb, int64_t n, void *y, int ty) {
  AMPC_GRID_STRIDE(i, n) {
    st(y, ty, i, num::regressionLoss(kind, ld(a, ta, i) - ld(b, tb, i), p));
  }
}

void regressionLoss(std::string_view op, num::RegressionLoss kind, float p,
                    std::span<const TensorRef> in,
                    std::span<const TensorRef> out, const Attrs &attrs,
                    cudaStream_t stream) {
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  using kernels::detail::Reduction;
  auto [n, reduction] =
      kernels::detail::regressionLossShape(op, a, b, y, attrs);
  if (reduction == Reduction::None) {
    if (n > 0)
      regressionElements<<<gridFor(n), kThreads, 0, stream>>>(
          kind, p, a.data, int(a.dtype), b.data, int(b.dtype), n, y.data,
          int(y.dtype));
    checkLaunch(op.data());
    return;
  }
  int blocks = std::max(1, std::min(gridFor(n), 1024));
  auto *partial = static_cast<float *>(
      scratch(size_t(blocks) * sizeof(float), op, stream));
  regressionPartials<<<blocks, kThreads, 0, stream>>>(
      kind, p, a.data, int(a.dtype), b.data, int(b.dtype), n, partial);
  sumPartials<<<1, 1024, 0, stream>>>(
      partial, blocks, reduction == Reduction::Mean ? float(n) : 1.0f, y.data,
      int(y.dtype));
  checkLaunch(op.data());
}

} // namespace

// Probability labels (LossIndex.cu).
void softCrossEntropy(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream);

void crossEntropyKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs,
                        cudaStream_t stream) {
  constexpr std::string_view op = "graph.cross_entropy";
  if (in.size() > 1 && in[1].dtype != DType::I32 && in[1].dtype != DType::I64)
    return softCrossEntropy(in, out, attrs, stream);
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  Ce p = ceSetup(
      op, kernels::detail::crossEntropyForward(op, logits, lab, y, attrs),
      logits, lab, stream);
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
  const kernels::detail::CrossEntropyShape shape =
      kernels::detail::crossEntropyBackward(op, logits, lab, g, dx, attrs);
  bool packedX = packedRows(logits, shape.classes);
  bool packedXD = packedX && packedOk(dx.data, dx.dtype);
  if (ceBackwardFusedPath()) {
    auto *count = static_cast<float *>(scratch(sizeof(float), op, stream));
    ceCount<<<1, 1024, 0, stream>>>(lab.data, int(lab.dtype), shape.rows,
                                    shape.classes, shape.ignore, count);
    if (shape.rows > 0)
      ceBackwardFused<<<unsigned(shape.rows), kRowThreads, 0, stream>>>(
          logits.data, int(logits.dtype), lab.data, int(lab.dtype), g.data,
          int(g.dtype), count, dx.data, int(dx.dtype), shape.classes,
          shape.ignore, float(1.0 - shape.smoothing),
          float(shape.smoothing / double(shape.classes)), packedX, packedXD);
    checkLaunch(op.data());
    return;
  }
  Ce p = ceSetup(op, shape, logits, lab, stream);
  ceFinish<<<1, 1024, 0, stream>>>(p.nll, p.smooth, p.counted, p.rows,
                                   p.smoothing, p.classes, nullptr, 0,
                                   p.count);
  if (p.rows > 0)
    ceBackwardRows<<<unsigned(p.rows), kRowThreads, 0, stream>>>(
      logits.data, int(logits.dtype), lab.data, int(lab.dtype), g.data,
      int(g.dtype), p.lse, p.count, dx.data, int(dx.dtype), p.classes,
      p.ignore, float(1.0 - p.smoothing),
      float(p.smoothing / double(p.classes)), packedXD);
  checkLaunch(op.data());
}

// AMPC_CUDA_CROSS_ENTROPY: unset, "" or "one-pass": ceCount, ceRowsGrad,
// ceFinish; "separate": cross_entropy's kernels, then cross_entropy_
// backward's (which read dx's logits before writing them, so dlogits may
// still be the logits' buffer). Read at each call, so a test can run both.
void crossEntropyWithGradKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.cross_entropy_with_grad";
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &g = required(op, in, 2);
  const TensorRef &y = required(op, out, 0), &dx = required(op, out, 1);
  kernels::detail::crossEntropyForward(op, logits, lab, y, attrs);
  const kernels::detail::CrossEntropyShape shape =
      kernels::detail::crossEntropyBackward(op, logits, lab, g, dx, attrs);
  if (kernels::envChoice("AMPC_CUDA_CROSS_ENTROPY",
                         {"one-pass", "separate"}) == 1) {
    TensorRef fwdIn[] = {logits, lab}, bwdIn[] = {logits, lab, g};
    crossEntropyKernel(fwdIn, std::span(&y, 1), attrs, stream);
    crossEntropyBackwardKernel(bwdIn, std::span(&dx, 1), attrs, stream);
    return;
  }
  auto *s = static_cast<float *>(
      scratch(size_t(3 * shape.rows + 1) * sizeof(float), op, stream));
  float *nll = s, *smooth = s + shape.rows, *counted = s + 2 * shape.rows,
        *count = s + 3 * shape.rows;
  ceCount<<<1, 1024, 0, stream>>>(lab.data, int(lab.dtype), shape.rows,
                                  shape.classes, shape.ignore, count);
  const bool packedX = packedRows(logits, shape.classes);
  if (shape.rows > 0)
    ceRowsGrad<<<unsigned(shape.rows), kRowThreads, 0, stream>>>(
        logits.data, int(logits.dtype), lab.data, int(lab.dtype), g.data,
        int(g.dtype), count, dx.data, int(dx.dtype), shape.classes,
        shape.ignore, float(1.0 - shape.smoothing),
        float(shape.smoothing / double(shape.classes)), nll, smooth, counted,
        packedX, packedX && packedOk(dx.data, dx.dtype));
  ceFinish<<<1, 1024, 0, stream>>>(nll, smooth, counted, shape.rows,
                                   shape.smoothing, shape.classes, y.data,
                                   int(y.dtype), nullptr);
  checkLaunch(op.data());
}

void mseLossKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &,
                   cudaStream_t stream) {
  constexpr std::string_view op = "graph.mse_loss";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  int64_t n = kernels::detail::mseLossCount(op, a, b, y);
  int blocks = std::min(gridFor(n), 1024);
  auto *partial = static_cast<float *>(
      scratch(size_t(blocks) * sizeof(float), op, stream));
  sqDiffPartials<<<blocks, kThreads, 0, stream>>>(
      a.data, int(a.dtype), b.data, int(b.dtype), n, partial);
  sumPartials<<<1, 1024, 0, stream>>>(partial, blocks, float(n), y.data,
                                      int(y.dtype));
  checkLaunch(op.data());
}

void l1LossKernel(std::span<const TensorRef> in,
                  std::span<const TensorRef> out, const Attrs &attrs,
                  cudaStream_t stream) {
  regressionLoss("graph.l1_loss", num::RegressionLoss::L1, 0.0f, in, out,
                 attrs, stream);
}
void smoothL1LossKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs,
                        cudaStream_t stream) {
  regressionLoss("graph.smooth_l1_loss", num::RegressionLoss::SmoothL1,
                 float(attrs.getFloat("beta", 1.0)), in, out, attrs, stream);
}
void huberLossKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  regressionLoss("graph.huber_loss", num::RegressionLoss::Huber,
                 float(attrs.getFloat("delta", 1.0)), in, out, attrs, stream);
}

} // namespace ampc::cuda
