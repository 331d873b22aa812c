//===- Common.cuh - Device helpers of the CUDA kernel library ---*- C++ -*-===//
//
// Element access switches on the dtype at run time instead of templating
// every kernel on it: a handful of instantiations keeps nvcc fast, and the
// branch is uniform across a warp.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_COMMON_CUH
#define AMPC_RUNTIME_CUDA_COMMON_CUH

#include "runtime/cuda/Common.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ampc::cuda::detail {

__device__ __forceinline__ float ld(const void *p, int dt, int64_t i) {
  switch (dt) {
  case int(DType::F16):
    return __half2float(static_cast<const __half *>(p)[i]);
  case int(DType::BF16):
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  case int(DType::I32):
    return float(static_cast<const int32_t *>(p)[i]);
  case int(DType::I64):
    return float(static_cast<const int64_t *>(p)[i]);
  default:
    return static_cast<const float *>(p)[i];
  }
}

// Rounds |v| once to the element type (RNE) and stores it.
__device__ __forceinline__ void st(void *p, int dt, int64_t i, float v) {
  switch (dt) {
  case int(DType::F16):
    static_cast<__half *>(p)[i] = __float2half_rn(v);
    break;
  case int(DType::BF16):
    static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
    break;
  case int(DType::I32):
    static_cast<int32_t *>(p)[i] = int32_t(v);
    break;
  case int(DType::I64):
    static_cast<int64_t *>(p)[i] = int64_t(v);
    break;
  default:
    static_cast<float *>(p)[i] = v;
  }
}

__device__ __forceinline__ int64_t ldId(const void *p, int dt, int64_t i) {
  return dt == int(DType::I64) ? static_cast<const int64_t *>(p)[i]
                               : int64_t(static_cast<const int32_t *>(p)[i]);
}

// Element |i| of a contiguous [planes, h, w] tensor as (plane, row,
// column): the preamble of the NCHW kernels that run one thread per pixel
// (Pool.cu, Resample.cu); planes are N * C.
struct Pixel {
  int64_t plane, y, x;
};
__device__ __forceinline__ Pixel pixelOf(int64_t i, int64_t h, int64_t w) {
  int64_t x = i % w, y = (i / w) % h, plane = i / (w * h);
  return {plane, y, x};
}

#define AMPC_GRID_STRIDE(i, n)                                                 \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

// Block-wide float sum (blockDim.x a multiple of 32, <= 1024); every thread
// gets the result. Fixed order: deterministic.
__device__ __forceinline__ float blockSum(float v) {
  __shared__ float warpSums[32];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    warpSums[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  float t = lane < warps ? warpSums[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1)
    t += __shfl_xor_sync(0xffffffffu, t, o);
  return t;
}

namespace {
// One block sums |count| per-block partial sums in order and stores the sum
// divided by |div| (the element count for a mean, 1 for a sum) to y[0]:
// the second launch of every deterministic two-pass reduction to a scalar.
// (An anonymous namespace: each kernel file gets its own copy.)
__global__ void sumPartials(const float *partial, int count, float div,
                            void *y, int ty) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    s += partial[i];
  s = blockSum(s);
  if (threadIdx.x == 0)
    st(y, ty, 0, s / div);
}
} // namespace

__device__ __forceinline__ float blockMax(float v) {
  __shared__ float warpMax[32];
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    warpMax[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  float t = lane < warps ? warpMax[lane] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1)
    t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, o));
  return t;
}

// log(sum_j exp(x_j)) of the row x[base, base + c) for the whole block:
// its max (blockMax), then the sum of exp(x_j - max) (blockSum), each
// thread striding by blockDim.x; every thread gets the result. The one
// order the cross-entropy kernels share, so their results agree bitwise.
// kSumX: also the row's plain sum into *sumX, from the same reads.
template <bool kSumX = false>
__device__ __forceinline__ float rowLogSumExp(const void *x, int tx,
                                              int64_t base, int64_t c,
                                              float *sumX = nullptr) {
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    mx = fmaxf(mx, ld(x, tx, base + j));
  mx = blockMax(mx);
  float s = 0.0f, sx = 0.0f;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
    float v = ld(x, tx, base + j);
    s += expf(v - mx);
    if constexpr (kSumX)
      sx += v;
  }
  s = blockSum(s);
  if constexpr (kSumX)
    *sumX = blockSum(sx);
  return mx + logf(s);
}

} // namespace ampc::cuda::detail

#endif
