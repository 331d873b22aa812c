//===- ColumnSums.cuh - Fixed-order sums over rows, per column --*- C++ -*-===//
//
// Sums over the rows of an [m, d] row-major view, two sums per column at
// once. Blocks of 32 columns x 8 row lanes each sum a chunk of rows (the
// lanes combined in a fixed order), then columnFinish adds the chunks, 16
// lanes per column also combined in a fixed order: deterministic, coalesced
// across the warp, and enough blocks for every SM even when d is small. (One
// thread per column looping over all rows gave GPT-2's d = 768 six blocks of
// latency-bound loads.)
//
// Used by the norms' weight and bias gradients (Norm.cu) and by sums over
// leading axes (Reduce.cu). The kernels have internal linkage: each .cu file
// that includes this gets its own copy (no relocatable device code).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_COLUMNSUMS_CUH
#define AMPC_RUNTIME_CUDA_COLUMNSUMS_CUH

#include "runtime/cuda/Common.cuh"

#include <algorithm>

namespace ampc::cuda::detail {
namespace {

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

constexpr int kFinishLanes = 16;

// a[j] = sum.x / divisor, b[j] = sum.y over the chunks (either may be null).
// Blocks of 32 columns x kFinishLanes lanes: lane l adds chunks l, l + 16,
// ... in order, then lane 0 adds the lanes in order, so the result does not
// depend on scheduling. (One thread per column adding every chunk gave the
// norms' 512 chunks at d = 768 three blocks of serial L2 loads.)
__global__ void columnFinish(const float2 *partial, int64_t chunks, int64_t d,
                             float divisor, void *a, int ta, void *b, int tb) {
  __shared__ float2 lanes[kFinishLanes][32];
  int64_t j = int64_t(blockIdx.x) * 32 + threadIdx.x;
  float2 s = make_float2(0.0f, 0.0f);
  if (j < d)
    for (int64_t c = threadIdx.y; c < chunks; c += kFinishLanes) {
      float2 v = partial[c * d + j];
      s.x += v.x;
      s.y += v.y;
    }
  lanes[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || j >= d)
    return;
  for (int l = 1; l < kFinishLanes; ++l) {
    s.x += lanes[l][threadIdx.x].x;
    s.y += lanes[l][threadIdx.x].y;
  }
  if (a)
    st(a, ta, j, divisor == 1.0f ? s.x : s.x / divisor);
  if (b)
    st(b, tb, j, s.y);
}

void finishColumns(const float2 *partial, int64_t chunks, int64_t d,
                   float divisor, void *a, int ta, void *b, int tb,
                   cudaStream_t stream) {
  columnFinish<<<unsigned((d + 31) / 32), dim3(32, kFinishLanes), 0, stream>>>(
      partial, chunks, d, divisor, a, ta, b, tb);
}

// At most one row per row lane (GPT-2's position-table gradient sums 8
// rows of 786432): one chunk, which columnDirect sums alone. More rows keep
// columnPartials' 8 threads a column even as one chunk (rows longer than
// 32768): one thread a column looping over them had 8 times fewer loads in
// flight.
bool columnsDirect(int64_t m) { return m <= kColLanes; }

// Bytes of partials columnSums needs (to be carved from the op's scratch).
size_t columnScratch(int64_t m, int64_t d) {
  if (columnsDirect(m))
    return 0;
  return size_t(columnPlan(m, d).chunks * d) * sizeof(float2);
}

// m <= kColLanes: columnPartials and columnFinish in one thread per
// column, with their arithmetic in their order (row r in lane r, added to
// the lane's zero; the lanes added in order; then added to a zero as the
// finish does), so the same bits without the partials' round trip and the
// finish's idle lanes. The m rows are loaded before any is added.
template <class F>
__global__ void columnDirect(F f, int64_t m, int64_t d, float divisor,
                             void *a, int ta, void *b, int tb) {
  int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= d)
    return;
  float2 lane[kColLanes];
#pragma unroll
  for (int l = 0; l < kColLanes; ++l)
    lane[l] = l < m ? f(l, j) : make_float2(0.0f, 0.0f);
#pragma unroll
  for (int l = 0; l < kColLanes; ++l) {
    lane[l].x = 0.0f + lane[l].x; // a lane's sum starts at +0 (-0 -> +0)
    lane[l].y = 0.0f + lane[l].y;
  }
  float2 acc = lane[0];
#pragma unroll
  for (int l = 1; l < kColLanes; ++l) {
    acc.x += lane[l].x;
    acc.y += lane[l].y;
  }
  float2 s = make_float2(0.0f, 0.0f);
  s.x += acc.x;
  s.y += acc.y;
  if (a)
    st(a, ta, j, divisor == 1.0f ? s.x : s.x / divisor);
  if (b)
    st(b, tb, j, s.y);
}

template <class F>
void columnSums(F f, int64_t m, int64_t d, float2 *partial, float divisor,
                void *a, int ta, void *b, int tb, cudaStream_t stream) {
  if (columnsDirect(m)) {
    columnDirect<<<unsigned((d + 255) / 256), 256, 0, stream>>>(
        f, m, d, divisor, a, ta, b, tb);
    return;
  }
  ColumnPlan p = columnPlan(m, d);
  columnPartials<<<dim3(unsigned((d + 31) / 32), unsigned(p.chunks)),
                   dim3(32, kColLanes), 0, stream>>>(f, m, d, p.rowsPerChunk,
                                                     partial);
  finishColumns(partial, p.chunks, d, divisor, a, ta, b, tb, stream);
}

} // namespace
} // namespace ampc::cuda::detail

#endif
