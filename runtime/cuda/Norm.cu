//===- Norm.cu - softmax, layer norm, RMS norm and their backward ---------===//
//
// FP32 math on any input type, one rounding per result, sums in a fixed
// order: every result here is deterministic run to run. The norms have two
// sets of kernels (Norm.h): the fused ones, one warp per row with packed
// loads, the backward's weight/bias column sums accumulated per chunk of
// rows in the same kernel; and the previous ones, one block per row with
// the column sums of ColumnSums.cuh.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Norm.h"
#include "runtime/cuda/ColumnSums.cuh"
#include "runtime/cuda/Common.cuh"
#include "runtime/cuda/Packed.cuh"
#include "runtime/kernels/EnvSwitch.h"

#include <algorithm>
#include <atomic>
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

// ---- The fused kernels: one warp per row -------------------------------
//
// Lane l holds the 8-element groups l, l + 32, ... (K of them) of its row in
// registers, so x (and g) are read once per launch. Packed accesses need
// d % 8 == 0 and 16-byte aligned tensors (checked on the host, per tensor).

constexpr int kRowWarps = 8; // rows in flight per block
// The backward's chunks: at most this many (each at least kRowWarps rows),
// their [chunks, d] float2 partials summed by columnFinish.
constexpr int64_t kMaxRowChunks = 512;

enum PackedBits : unsigned {
  kPX = 1, kPW = 2, kPB = 4, kPY = 8, kPG = 16,
  // kernel-fuse-residual-norm's extra operands: the added one (forward rhs,
  // backward acc), the stored sum (forward), the half copy (backward).
  kPR = 32, kPS = 64, kPH = 128
};

// Valid elements of group |q| of a row of |d|.
__device__ __forceinline__ int groupCount(int64_t q, int64_t d) {
  int64_t j = q * kPack;
  return j >= d ? 0 : int(d - j < kPack ? d - j : kPack);
}

// Mean (0 for RMS) and rstd of the row in |v|, by the CPU's formula: the
// two-pass mean and biased variance, or the mean of squares for RMS.
template <int K>
__device__ __forceinline__ float2 rowStats(const float (&v)[K][kPack],
                                           int lane, int64_t d, float eps,
                                           bool rms) {
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < kPack; ++e)
      s += rms ? v[k][e] * v[k][e] : v[k][e]; // padding is 0
  s = warpSum(s);
  if (rms)
    return make_float2(0.0f, 1.0f / sqrtf(s / float(d) + eps));
  float mean = s / float(d), var = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int n = groupCount(lane + 32 * k, d);
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      float c = e < n ? v[k][e] - mean : 0.0f;
      var += c * c;
    }
  }
  var = warpSum(var) / float(d);
  return make_float2(mean, 1.0f / sqrtf(var + eps));
}

template <int K>
__global__ void __launch_bounds__(kRowWarps * 32)
    normRowsWarp(const void *x, int tx, const void *w, int tw, const void *b,
                 int tb, void *y, int ty, int64_t m, int64_t d, float eps,
                 bool rms, unsigned packed, const void *r, int tr,
                 float *sum) {
  const int lane = threadIdx.x & 31;
  const int64_t row = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
  if (row >= m)
    return; // whole warps only: nothing below syncs the block
  const int64_t base = row * d;
  float v[K][kPack];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int64_t q = lane + 32 * k;
    int n = groupCount(q, d);
    ld8(x, tx, base + q * kPack, (packed & kPX) && n == kPack, n, v[k]);
    if (r) {
      // The residual add (kernel.add_layer_norm): one FP32 add, never
      // contracted, as the elementwise loop it replaces; the padding stays 0.
      float rv[kPack];
      ld8(r, tr, base + q * kPack, (packed & kPR) && n == kPack, n, rv);
#pragma unroll
      for (int e = 0; e < kPack; ++e)
        v[k][e] = __fadd_rn(v[k][e], rv[e]);
      if (n > 0)
        st8f(sum, base + q * kPack, (packed & kPS) && n == kPack, n, v[k]);
    }
  }
  const float2 st = rowStats<K>(v, lane, d, eps, rms);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int64_t q = lane + 32 * k;
    int n = groupCount(q, d);
    if (n == 0)
      continue;
    float wv[kPack], bv[kPack], out[kPack];
    if (w)
      ld8(w, tw, q * kPack, (packed & kPW) && n == kPack, n, wv);
    if (b)
      ld8(b, tb, q * kPack, (packed & kPB) && n == kPack, n, bv);
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      float o = (v[k][e] - st.x) * st.y;
      if (w)
        o *= wv[e];
      if (b)
        o += bv[e];
      out[e] = o;
    }
    st8(y, ty, base + q * kPack, (packed & kPY) && n == kPack, n, out);
  }
}

// dx of each row of chunk blockIdx.x (one warp per row), and the chunk's
// column sums (g * xhat, g) into partial[blockIdx.x * d + j]: each warp sums
// its rows in row order, then the warps are added in warp order. The launch
// bounds keep the blocks per SM each K had before the residual was loaded
// early (ptxas, sm_90: K = 1 80 registers and 3 blocks, K = 2 128 and 2,
// each with a few bytes of spill; K = 3 (GPT-2) 193 and K = 4 239, one
// block, none); without the minimum K = 1 took 109 registers and K = 2
// 166, a block fewer each.
//
// Without Sums (NormSums::Split) no column sums: lane 0 stores each row's
// statistics to |statsOut| (when given) for NormParamTerms instead, and the
// lanes keep no accumulators, so more warps fit an SM (ptxas, sm_90: K = 3
// 128 registers and 2 blocks, 12 bytes of spill; K = 4 stays at one block,
// as with the sums, where 128 registers spilled 500 bytes).
template <int K, bool Sums>
__global__ void __launch_bounds__(kRowWarps * 32,
                                  Sums ? (K == 1 ? 3 : K == 2 ? 2 : 1)
                                       : (K == 1 ? 3 : K == 4 ? 1 : 2))
    normBackwardWarp(const void *x, int tx, const void *w, int tw,
                     const void *g, int tg, void *dx, int tdx, int64_t m,
                     int64_t d, float eps, bool rms, int64_t rowsPerChunk,
                     float2 *partial, unsigned packed, const void *acc,
                     int tacc, void *dxh, int tdxh, float2 *statsOut) {
  __shared__ float2 sums[Sums ? kFusedNormMaxD : 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t r0 = int64_t(blockIdx.x) * rowsPerChunk;
  const int64_t r1 = r0 + rowsPerChunk < m ? r0 + rowsPerChunk : m;
  float aw[Sums ? K : 1][kPack], ab[Sums ? K : 1][kPack];
#pragma unroll
  for (int k = 0; k < (Sums ? K : 1); ++k)
#pragma unroll
    for (int e = 0; e < kPack; ++e)
      aw[k][e] = ab[k][e] = 0.0f;
  for (int64_t r = r0 + warp; r < r1; r += kRowWarps) {
    const int64_t base = r * d;
    float xv[K][kPack], gv[K][kPack], av[K][kPack];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t q = lane + 32 * k;
      int n = groupCount(q, d);
      ld8(x, tx, base + q * kPack, (packed & kPX) && n == kPack, n, xv[k]);
      ld8(g, tg, base + q * kPack, (packed & kPG) && n == kPack, n, gv[k]);
      // The residual too, with x and g: loaded after the first dx store it
      // would wait for it (the pointers may alias, so the compiler keeps
      // the order), one memory round trip per group instead of one a row.
      // The lane that writes an element reads it, so in place is fine.
      if (acc && dx)
        ld8(acc, tacc, base + q * kPack, (packed & kPR) && n == kPack, n,
            av[k]);
    }
    const float2 st = rowStats<K>(xv, lane, d, eps, rms);
    if (!Sums && statsOut && lane == 0)
      statsOut[r] = st;
    float sgw = 0.0f, sgwx = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t q = lane + 32 * k;
      int n = groupCount(q, d);
      float wv[kPack];
      ld8(w, tw, q * kPack, (packed & kPW) && n == kPack, n, wv);
#pragma unroll
      for (int e = 0; e < kPack; ++e) {
        // Padding: g = 0 and w = 0, so it adds nothing below.
        float xhat = (xv[k][e] - st.x) * st.y;
        xv[k][e] = xhat;
        float gw = gv[k][e] * wv[e];
        sgw += gw;
        sgwx += gw * xhat;
        if constexpr (Sums) {
          aw[k][e] += gv[k][e] * xhat;
          ab[k][e] += gv[k][e];
        }
      }
    }
    sgw = warpSum(sgw);
    sgwx = warpSum(sgwx);
    if (!dx)
      continue;
    const float mgw = rms ? 0.0f : sgw / float(d), mgwx = sgwx / float(d);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t q = lane + 32 * k;
      int n = groupCount(q, d);
      if (n == 0)
        continue;
      float wv[kPack], out[kPack];
      ld8(w, tw, q * kPack, (packed & kPW) && n == kPack, n, wv);
#pragma unroll
      for (int e = 0; e < kPack; ++e)
        out[e] = st.y * (gv[k][e] * wv[e] - mgw - xv[k][e] * mgwx);
      if (acc) {
        // kernel.layer_norm_backward_add: dx + acc in FP32, never contracted
        // into the product above, as the add loop it replaces.
#pragma unroll
        for (int e = 0; e < kPack; ++e)
          out[e] = __fadd_rn(out[e], av[k][e]);
      }
      st8(dx, tdx, base + q * kPack, (packed & kPY) && n == kPack, n, out);
      if (dxh)
        st8(dxh, tdxh, base + q * kPack, (packed & kPH) && n == kPack, n, out);
    }
  }
  if constexpr (Sums) {
    if (!partial)
      return; // uniform: no weight or bias gradient wanted
    for (int wp = 0; wp < kRowWarps; ++wp) {
      if (warp == wp) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          int64_t q = lane + 32 * k;
          int n = groupCount(q, d);
#pragma unroll
          for (int e = 0; e < kPack; ++e) {
            if (e >= n)
              continue;
            float2 &s = sums[q * kPack + e];
            s = wp == 0 ? make_float2(aw[k][e], ab[k][e])
                        : make_float2(s.x + aw[k][e], s.y + ab[k][e]);
          }
        }
      }
      __syncthreads();
    }
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      partial[int64_t(blockIdx.x) * d + j] = sums[j];
  }
}

// The split sums' column pass (NormSums::Split): partial[c * d + j] =
// (sum of g * xhat, sum of g) over the rows of chunk c, xhat from the row
// statistics normBackwardWarp stored. Lane l of each warp holds columns
// 8 (32 blockIdx.x + l) .. + 8 (packed loads: a warp reads 512 contiguous
// bytes of a row), warp w rows r0 + w, r0 + w + 8, ... in order (two
// loaded at a time), then the warps are added in warp order: a fixed
// order. ColumnSums.cuh's columnPartials, one element a thread, ran these
// rows at 0.7 TB/s on an H200 (36 us for 8192 x 768 bf16).
constexpr int64_t kColumnChunkRows = 64;

// Rows per chunk of the column pass: 64, or more (a multiple of 16, so the
// two-rows-at-a-time loop stays even) where 64-row chunks would pass the
// grid's 65535 limit in y (more than 4194240 rows).
int64_t columnChunkRows(int64_t m) {
  int64_t per = std::max<int64_t>(kColumnChunkRows, (m + 65534) / 65535);
  return (per + 15) / 16 * 16;
}

__global__ void __launch_bounds__(kRowWarps * 32)
    normColumnPartials(const void *x, int tx, const void *g, int tg,
                       const float2 *stats, int64_t m, int64_t d,
                       int64_t rowsPerChunk, float2 *partial,
                       unsigned packed) {
  __shared__ float2 part[kRowWarps][32 * kPack];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t q = int64_t(blockIdx.x) * 32 + lane; // this lane's group
  const int n = groupCount(q, d);
  const bool px = (packed & kPX) && n == kPack, pg = (packed & kPG) && n == kPack;
  const int64_t r0 = int64_t(blockIdx.y) * rowsPerChunk;
  const int64_t r1 = r0 + rowsPerChunk < m ? r0 + rowsPerChunk : m;
  float sx[kPack], sg[kPack];
#pragma unroll
  for (int e = 0; e < kPack; ++e)
    sx[e] = sg[e] = 0.0f;
  auto add = [&](const float (&xv)[kPack], const float (&gv)[kPack],
                 float2 st) {
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      sx[e] += gv[e] * ((xv[e] - st.x) * st.y);
      sg[e] += gv[e];
    }
  };
  if (n > 0)
    for (int64_t r = r0 + warp; r < r1; r += 2 * kRowWarps) {
      const int64_t r2 = r + kRowWarps;
      float xa[kPack], ga[kPack], xb[kPack], gb[kPack];
      ld8(x, tx, r * d + q * kPack, px, n, xa);
      ld8(g, tg, r * d + q * kPack, pg, n, ga);
      if (r2 < r1) {
        ld8(x, tx, r2 * d + q * kPack, px, n, xb);
        ld8(g, tg, r2 * d + q * kPack, pg, n, gb);
      }
      add(xa, ga, stats[r]);
      if (r2 < r1)
        add(xb, gb, stats[r2]);
    }
#pragma unroll
  for (int e = 0; e < kPack; ++e)
    part[warp][lane * kPack + e] = make_float2(sx[e], sg[e]);
  __syncthreads();
  const int64_t j = int64_t(blockIdx.x) * 32 * kPack + threadIdx.x;
  if (threadIdx.x >= 32 * kPack || j >= d)
    return;
  float2 t = part[0][threadIdx.x];
  for (int w = 1; w < kRowWarps; ++w) {
    t.x += part[w][threadIdx.x].x;
    t.y += part[w][threadIdx.x].y;
  }
  partial[int64_t(blockIdx.y) * d + j] = t;
}
static_assert(kRowWarps * 32 == 32 * kPack,
              "normColumnPartials: a thread per column of the block");

// Groups of 8 per lane for rows of |d|: 1..4, or 0 when d is too wide.
int lanesGroups(int64_t d) {
  if (d < 1 || d > kFusedNormMaxD)
    return 0;
  int64_t groups = (d + kPack - 1) / kPack;
  return int((groups + 31) / 32);
}

struct RowChunks {
  int64_t chunks, rowsPerChunk;
};

// The backward's chunks of rows (compiler/cost/CostModel.cpp mirrors it).
RowChunks rowChunks(int64_t m) {
  int64_t chunks = std::max<int64_t>(
      1, std::min<int64_t>(kMaxRowChunks, (m + kRowWarps - 1) / kRowWarps));
  int64_t per = (m + chunks - 1) / chunks;
  return {(m + per - 1) / per, per};
}

// Bit |bit| when |t| may take packed accesses (rows of d % 8 == 0).
unsigned packedBit(const TensorRef *t, int64_t d, unsigned bit) {
  return t && d % kPack == 0 && packedOk(t->data, t->dtype) ? bit : 0u;
}

void launchNormRowsWarp(int k, dim3 grid, cudaStream_t stream,
                        const void *x, int tx, const void *w, int tw,
                        const void *b, int tb, void *y, int ty, int64_t m,
                        int64_t d, float eps, bool rms, unsigned packed,
                        const void *r = nullptr, int tr = 0,
                        float *sum = nullptr) {
  auto kernel = k == 1   ? normRowsWarp<1>
                : k == 2 ? normRowsWarp<2>
                : k == 3 ? normRowsWarp<3>
                         : normRowsWarp<4>;
  kernel<<<grid, kRowWarps * 32, 0, stream>>>(x, tx, w, tw, b, tb, y, ty, m,
                                              d, eps, rms, packed, r, tr, sum);
}

// The fused forward; false when the rows are too wide for it.
// With |r| and |sum| (kernel.add_layer_norm): normalises x + r, storing the
// sum (f32).
bool normForwardFused(const TensorRef &x, const TensorRef *w,
                      const TensorRef *b, const TensorRef &y, int64_t m,
                      int64_t d, float eps, bool rms, cudaStream_t stream,
                      const TensorRef *r = nullptr,
                      const TensorRef *sum = nullptr) {
  int k = lanesGroups(d);
  if (k == 0 || normKernels() != NormKernels::Fused)
    return false;
  unsigned packed = packedBit(&x, d, kPX) | packedBit(w, d, kPW) |
                    packedBit(b, d, kPB) | packedBit(&y, d, kPY) |
                    packedBit(r, d, kPR) | packedBit(sum, d, kPS);
  launchNormRowsWarp(k, dim3(unsigned((m + kRowWarps - 1) / kRowWarps)),
                     stream, x.data, int(x.dtype), w ? w->data : nullptr,
                     w ? int(w->dtype) : 0, b ? b->data : nullptr,
                     b ? int(b->dtype) : 0, y.data, int(y.dtype), m, d, eps,
                     rms, packed, r ? r->data : nullptr, r ? int(r->dtype) : 0,
                     sum ? static_cast<float *>(sum->data) : nullptr);
  return true;
}

// The fused backward: normBackwardWarp, then columnFinish over the chunks.
// With |acc| (kernel.layer_norm_backward_add): stores dx + acc to |dx| and
// to |dxh| when given.
bool normBackwardFused(std::string_view op, const TensorRef &x,
                       const TensorRef &w, const TensorRef &g,
                       const TensorRef *dx, const TensorRef *dw,
                       const TensorRef *db, int64_t m, int64_t d, float eps,
                       bool rms, cudaStream_t stream,
                       const TensorRef *acc = nullptr,
                       const TensorRef *dxh = nullptr) {
  int k = lanesGroups(d);
  if (k == 0 || normKernels() != NormKernels::Fused)
    return false;
  const bool split = normSumsSplit(normSums(), d);
  RowChunks c = rowChunks(m);
  const int64_t colRows = columnChunkRows(m);
  const int64_t colChunks = (m + colRows - 1) / colRows;
  float2 *partial = nullptr, *stats = nullptr;
  if ((dw || db) && split) {
    // The row statistics, then the column pass's partials.
    size_t statBytes = (size_t(m) * sizeof(float2) + 255) & ~size_t(255);
    char *buf = static_cast<char *>(scratch(
        statBytes + size_t(colChunks * d) * sizeof(float2), op, stream));
    stats = reinterpret_cast<float2 *>(buf);
    partial = reinterpret_cast<float2 *>(buf + statBytes);
  } else if (dw || db) {
    partial = static_cast<float2 *>(
        scratch(size_t(c.chunks * d) * sizeof(float2), op, stream));
  }
  unsigned packed = packedBit(&x, d, kPX) | packedBit(&w, d, kPW) |
                    packedBit(&g, d, kPG) | packedBit(dx, d, kPY) |
                    packedBit(acc, d, kPR) | packedBit(dxh, d, kPH);
  using Kernel = void (*)(const void *, int, const void *, int, const void *,
                          int, void *, int, int64_t, int64_t, float, bool,
                          int64_t, float2 *, unsigned, const void *, int,
                          void *, int, float2 *);
  static constexpr Kernel inlineSums[] = {
      normBackwardWarp<1, true>, normBackwardWarp<2, true>,
      normBackwardWarp<3, true>, normBackwardWarp<4, true>};
  static constexpr Kernel splitSums[] = {
      normBackwardWarp<1, false>, normBackwardWarp<2, false>,
      normBackwardWarp<3, false>, normBackwardWarp<4, false>};
  Kernel kernel = (split ? splitSums : inlineSums)[k - 1];
  kernel<<<unsigned(c.chunks), kRowWarps * 32, 0, stream>>>(
      x.data, int(x.dtype), w.data, int(w.dtype), g.data, int(g.dtype),
      dx ? dx->data : nullptr, dx ? int(dx->dtype) : 0, m, d, eps, rms,
      c.rowsPerChunk, split ? nullptr : partial, packed,
      acc ? acc->data : nullptr, acc ? int(acc->dtype) : 0,
      dxh ? dxh->data : nullptr, dxh ? int(dxh->dtype) : 0, stats);
  if (partial && split) {
    const int64_t groups = (d + kPack - 1) / kPack;
    normColumnPartials<<<dim3(unsigned((groups + 31) / 32), unsigned(colChunks)),
                         kRowWarps * 32, 0, stream>>>(
        x.data, int(x.dtype), g.data, int(g.dtype), stats, m, d, colRows,
        partial, packed);
  }
  if (partial)
    finishColumns(partial, split ? colChunks : c.chunks, d, 1.0f,
                  dw ? dw->data : nullptr, dw ? int(dw->dtype) : 0,
                  db ? db->data : nullptr, db ? int(db->dtype) : 0, stream);
  checkLaunch(op.data());
  return true;
}

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
  if (normBackwardFused(op, x, w, g, dx, dw, db, m, d, eps, rms, stream))
    return;
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

namespace {
// -1: the environment decides; else a NormKernels value (tests).
std::atomic<int> normOverride{-1};
} // namespace

NormKernels normKernels() {
  int o = normOverride.load(std::memory_order_relaxed);
  if (o >= 0)
    return NormKernels(o);
  static const NormKernels fromEnv =
      kernels::envChoice("AMPC_CUDA_NORM", {"fused", "rows"}) == 0
          ? NormKernels::Fused
          : NormKernels::Rows;
  return fromEnv;
}

void setNormKernels(NormKernels k) { normOverride.store(int(k)); }
void resetNormKernels() { normOverride.store(-1); }

namespace {
std::atomic<int> sumsOverride{-1};
} // namespace

NormSums normSums() {
  int o = sumsOverride.load(std::memory_order_relaxed);
  if (o >= 0)
    return NormSums(o);
  static const NormSums fromEnv = NormSums(
      kernels::envChoice("AMPC_CUDA_NORM_SUMS", {"auto", "inline", "split"}));
  return fromEnv;
}

void setNormSums(NormSums s) { sumsOverride.store(int(s)); }
void resetNormSums() { sumsOverride.store(-1); }

bool normSumsSplit(NormSums s, int64_t d) {
  // K = 3 and 4 (lanesGroups): rows of more than 512 elements.
  return s == NormSums::Split || (s == NormSums::Auto && d > 512);
}

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
  int64_t m = kernels::detail::normRows(op, x, y, d, {w, b});
  if (m == 0)
    return;
  float eps = float(attrs.getFloat("eps", 1e-5));
  if (normForwardFused(x, w, b, y, m, d, eps, false, stream)) {
    checkLaunch(op.data());
    return;
  }
  normRows<<<unsigned(m), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w ? w->data : nullptr, w ? int(w->dtype) : 0,
      b ? b->data : nullptr, b ? int(b->dtype) : 0, y.data, int(y.dtype), d,
      eps, false, nullptr);
  checkLaunch(op.data());
}

void rmsNormKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs,
                   cudaStream_t stream) {
  constexpr std::string_view op = "graph.rms_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef *w = optional(in, 1);
  int64_t d;
  int64_t m = kernels::detail::normRows(op, x, y, d, {w});
  if (m == 0)
    return;
  float eps = float(attrs.getFloat("eps", kernels::machineEpsilon(x.dtype)));
  if (normForwardFused(x, w, nullptr, y, m, d, eps, true, stream)) {
    checkLaunch(op.data());
    return;
  }
  normRows<<<unsigned(m), kThreads, 0, stream>>>(
      x.data, int(x.dtype), w ? w->data : nullptr, w ? int(w->dtype) : 0,
      nullptr, 0, y.data, int(y.dtype), d, eps, true, nullptr);
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

// Elementwise.cu: the previous path of the two kernels below runs them.
void addKernel(std::span<const TensorRef>, std::span<const TensorRef>,
               const Attrs &, cudaStream_t);
void castKernel(std::span<const TensorRef>, std::span<const TensorRef>,
                const Attrs &, cudaStream_t);

bool fusedResidualNorm() {
  // Read at each call, so a GPU test can run both paths in one process.
  return kernels::envChoice("AMPC_CUDA_FUSED_RESIDUAL_NORM", {"on", "off"}) ==
         0;
}

// in: lhs, rhs, weight?, bias? (layer norm). out: sum (f32), y.
// normRowsWarp loads both addends, stores their FP32 sum and normalises it.
// The previous path (AMPC_CUDA_FUSED_RESIDUAL_NORM=off, rows wider than
// the fused kernel, or AMPC_CUDA_NORM=rows): the add, then the norm reading
// the sum back.
void addNorm(std::string_view op, bool rms, std::span<const TensorRef> in,
             std::span<const TensorRef> out, const Attrs &attrs,
             cudaStream_t stream) {
  const TensorRef &a = required(op, in, 0), &r = required(op, in, 1);
  const TensorRef &sum = required(op, out, 0), &y = required(op, out, 1);
  const TensorRef *w = optional(in, 2), *b = rms ? nullptr : optional(in, 3);
  int64_t d;
  int64_t m = kernels::detail::lastDimRows(op, a, d, {w, b});
  if (r.numel() != a.numel() || sum.numel() != a.numel() ||
      y.numel() != a.numel())
    kernels::detail::fail(op, "rhs, sum and result need lhs's size");
  if (sum.dtype != DType::F32)
    kernels::detail::fail(op, "the sum must be f32");
  if (m == 0)
    return;
  float eps = float(attrs.getFloat(
      "eps", rms ? kernels::machineEpsilon(DType::F32) : 1e-5));
  if (fusedResidualNorm() &&
      normForwardFused(a, w, b, y, m, d, eps, rms, stream, &r, &sum)) {
    checkLaunch(op.data());
    return;
  }
  const TensorRef addIn[] = {a, r}, addOut[] = {sum};
  addKernel(addIn, addOut, Attrs{}, stream);
  TensorRef normIn[] = {sum, w ? *w : TensorRef{}, b ? *b : TensorRef{}};
  const TensorRef normOut[] = {y};
  if (rms)
    rmsNormKernel(std::span(normIn, 2), normOut, attrs, stream);
  else
    layerNormKernel(normIn, normOut, attrs, stream);
}

// in: x, weight, g, acc. out: dx_sum (f32), dweight, dbias (layer norm),
// dx_half?. normBackwardWarp adds acc to dx in FP32 before its store (and
// stores the half copy too). The previous path: the norm's backward into
// dx_sum, the add in place, the cast.
void normBackwardAdd(std::string_view op, bool rms,
                     std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &g = required(op, in, 2), &acc = required(op, in, 3);
  const TensorRef &dx = required(op, out, 0);
  const TensorRef *dw = optional(out, 1), *db = rms ? nullptr : optional(out, 2),
                  *half = optional(out, rms ? 2 : 3);
  if (acc.numel() != x.numel() || (half && half->numel() != x.numel()))
    kernels::detail::fail(op, "acc and dx_half need x's size");
  if (dx.dtype != DType::F32)
    kernels::detail::fail(op, "dx_sum must be f32");
  int64_t d;
  int64_t m = kernels::detail::normBackwardRows(op, x, w, g, &dx, dw, db, d);
  float eps = float(attrs.getFloat(
      "eps", rms ? kernels::machineEpsilon(x.dtype) : 1e-5));
  if (m > 0 && fusedResidualNorm() &&
      normBackwardFused(op, x, w, g, &dx, dw, db, m, d, eps, rms, stream,
                        &acc, half))
    return;
  const TensorRef bwdIn[] = {x, w, g};
  const TensorRef bwdOut[] = {dx, dw ? *dw : TensorRef{}, db ? *db : TensorRef{}};
  if (rms)
    rmsNormBackwardKernel(bwdIn, std::span(bwdOut, 2), attrs, stream);
  else
    layerNormBackwardKernel(bwdIn, bwdOut, attrs, stream);
  if (m == 0)
    return;
  const TensorRef addIn[] = {dx, acc}, addOut[] = {dx};
  addKernel(addIn, addOut, Attrs{}, stream);
  if (half) {
    const TensorRef castIn[] = {dx}, castOut[] = {*half};
    castKernel(castIn, castOut, Attrs{}, stream);
  }
}

void addLayerNormKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs,
                        cudaStream_t stream) {
  addNorm("kernel.add_layer_norm", false, in, out, attrs, stream);
}

void addRmsNormKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream) {
  addNorm("kernel.add_rms_norm", true, in, out, attrs, stream);
}

void layerNormBackwardAddKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs, cudaStream_t stream) {
  normBackwardAdd("kernel.layer_norm_backward_add", false, in, out, attrs,
                  stream);
}

void rmsNormBackwardAddKernel(std::span<const TensorRef> in,
                              std::span<const TensorRef> out,
                              const Attrs &attrs, cudaStream_t stream) {
  normBackwardAdd("kernel.rms_norm_backward_add", true, in, out, attrs, stream);
}

} // namespace ampc::cuda
