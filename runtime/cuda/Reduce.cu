//===- Reduce.cu - reduce_sum, reduce_mean, reduce_max and its backward ---===//
//
// One block per output element with a fixed-order block sum; sums over the
// leading axes (bias gradients) take the column sums of ColumnSums.cuh.
// Deterministic run to run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ColumnSums.cuh"
#include "runtime/cuda/Common.cuh"

namespace ampc::cuda {

using namespace detail;

namespace {

constexpr int kThreads = 256;

// (x, 0): plain column sums (reduce_sum / reduce_mean over leading axes).
struct ColumnValues {
  const void *x;
  int tx;
  int64_t d;
  __device__ float2 operator()(int64_t r, int64_t j) const {
    return make_float2(ld(x, tx, r * d + j), 0.0f);
  }
};



struct Reduce {
  int keptRank, redRank;
  int64_t keptDims[kMaxRank], keptStrides[kMaxRank];
  int64_t redDims[kMaxRank], redStrides[kMaxRank];
  int64_t count; // elements per output
  bool leading;  // the reduced axes are the leading ones: column sums
};

// The shared checks and reduced axes (runtime/kernels/Geometry.h), split
// into kept and reduced dimensions for the kernels.
Reduce reduction(std::string_view op, const TensorRef &x, const TensorRef &y,
                 const Attrs &attrs, const TensorRef *dx = nullptr) {
  kernels::detail::ReduceAxes axes =
      kernels::detail::reduceAxes(op, x, y, attrs, dx);
  Reduce r{};
  r.count = axes.count;
  r.leading = true;
  int64_t strides[kMaxRank];
  kernels::detail::strides(x, strides);
  for (int d = 0; d < x.rank; ++d) {
    if (axes.reduced[d]) {
      r.leading &= r.keptRank == 0;
      r.redDims[r.redRank] = x.shape[d];
      r.redStrides[r.redRank++] = strides[d];
    } else {
      r.keptDims[r.keptRank] = x.shape[d];
      r.keptStrides[r.keptRank++] = strides[d];
    }
  }
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

} // namespace

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
  Reduce r = reduction(op, x, g, attrs, &dx);
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
