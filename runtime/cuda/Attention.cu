//===- Attention.cu - scaled_dot_product_attention and its backward --------===//
//
// The math path (GEMMs + softmax pieces), batched over (batch, head):
// S = scale Q K^T in FP32 (cuBLASLt, FP32 accumulation), a masked row
// softmax in FP32, P rounded to V's type for O = P V (as PyTorch's math
// attention does under autocast). Backward recomputes P:
//   dV = P^T G, dP = G V^T, dS = P * (dP - rowsum(P * dP)),
//   dQ = scale dS K, dK = scale dS^T Q.
// Causal masks are top-left aligned (key j > query i is masked). The
// optional mask is a keep-mask (integer, nonzero keeps) or a float bias
// added to the scores; a row with every key masked gives P = 0 (PyTorch
// 2.15). Grouped-query attention needs no extra work: the query heads a kv
// head serves are consecutive, so they are one GEMM's rows (AttnGeom), and
// dK, dV sum over them inside the GEMMs.
//
// Eligible calls (runtime/kernels/AttentionPath.h: half, no mask tensor)
// take cuDNN's flash attention instead (FlashAttention.h); this math path
// is the fallback and, with AMPC_CUDA_ATTENTION=math, the reference.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/cuda/FlashAttention.h"
#include "runtime/cuda/Gemm.h"
#include "runtime/kernels/EnvSwitch.h"
#include "runtime/kernels/PackedAttention.h"

#include <cmath>

namespace ampc::cuda {

using namespace detail;

namespace {

// Attention dims and attributes (shared with the CPU library).
using Geo = kernels::detail::AttnGeom;

// The optional mask of a row: its data, dtype and broadcast view.
struct MaskArg {
  const void *data = nullptr;
  int dtype = 0;
  kernels::detail::AttnMask view;
};

// In place on FP32 scores [rows = batch*t, S]; also writes P in |tp|. Row r
// of kv head b is query r % tq of query head b * group + r / tq.
__global__ void maskedSoftmax(float *p, void *pHalf, int tp, int64_t t,
                              int64_t s, bool causal, int64_t tq,
                              int64_t group, MaskArg mask) {
  int64_t row = blockIdx.x, r = row % t, i = r % tq;
  float *x = p + row * s;
  int64_t n = causal ? (i + 1 < s ? i + 1 : s) : s;
  if (mask.data) {
    const kernels::detail::AttnMask &m = mask.view;
    int64_t h = (row / t) * group + r / tq;
    int64_t base = (h / m.hq) * m.sb + (h % m.hq) * m.sh + i * m.st;
    bool additive = m.additive;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      int64_t at = base + j * m.ss; // AttnMask::offset (a host function)
      x[j] += additive ? ld(mask.data, mask.dtype, at)
                       : (ldId(mask.data, mask.dtype, at) != 0 ? 0.0f
                                                               : -INFINITY);
    }
  }
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    mx = fmaxf(mx, x[j]);
  mx = blockMax(mx);
  if (mx == -INFINITY) // every key masked: attends to nothing
    n = 0;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    sum += expf(x[j] - mx);
  sum = blockSum(sum);
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x) {
    float v = j < n ? expf(x[j] - mx) / sum : 0.0f;
    x[j] = v;
    if (pHalf)
      st(pHalf, tp, row * s + j, v);
  }
}

// dS = P * (dP - rowsum(P * dP)) in place on dP; also in |tp|.
__global__ void softmaxBackwardRows(const float *p, float *dp, void *dsHalf,
                                    int tp, int64_t s) {
  int64_t row = blockIdx.x;
  const float *pr = p + row * s;
  float *dr = dp + row * s;
  float dot = 0.0f;
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x)
    dot += pr[j] * dr[j];
  dot = blockSum(dot);
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x) {
    float v = pr[j] * (dr[j] - dot);
    dr[j] = v;
    st(dsHalf, tp, row * s + j, v);
  }
}

struct Buffers {
  float *p32, *dp32;
  void *pLow, *dsLow;
};

Buffers buffers(const Geo &g, DType low, bool backward, std::string_view op,
                cudaStream_t stream) {
  size_t n = size_t(g.batch * g.t * g.s);
  size_t f = (n * sizeof(float) + 255) & ~size_t(255);
  size_t h = (n * dtypeSize(low) + 255) & ~size_t(255);
  char *s = static_cast<char *>(
      scratch(backward ? 2 * f + 2 * h : f + h, op, stream));
  Buffers b{};
  b.p32 = reinterpret_cast<float *>(s);
  b.pLow = s + f;
  if (backward) {
    b.dp32 = reinterpret_cast<float *>(s + f + h);
    b.dsLow = s + 2 * f + h;
  }
  return b;
}

// P (FP32 and in |low|) for all (batch, head).
void probabilities(const Geo &g, const TensorRef &q, const TensorRef &k,
                   const TensorRef *maskRef, const Buffers &b, DType low,
                   std::string_view op, cudaStream_t stream) {
  MaskArg mask;
  if (maskRef) {
    mask.data = maskRef->data, mask.dtype = int(maskRef->dtype);
    mask.view = kernels::detail::attentionMask(op, q, k, *maskRef);
  }
  Gemm m;
  m.transB = true;
  m.m = g.t, m.n = g.s, m.k = g.d;
  m.a = q.data, m.aType = q.dtype, m.lda = g.d, m.strideA = g.t * g.d;
  m.b = k.data, m.bType = k.dtype, m.ldb = g.d, m.strideB = g.s * g.d;
  m.c = b.p32, m.cType = DType::F32, m.ldc = g.s, m.strideC = g.t * g.s;
  m.batch = g.batch;
  m.alpha = g.scale;
  gemm(m, stream, op);
  maskedSoftmax<<<unsigned(g.batch * g.t), 256, 0, stream>>>(
      b.p32, b.pLow, int(low), g.t, g.s, g.causal, g.tq, g.group, mask);
}

} // namespace

void attentionKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.scaled_dot_product_attention";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &o = required(op, out, 0);
  Geo g = kernels::detail::attentionForward(op, q, k, v, o, attrs);
  if (flashForward(q, k, v, o, g.scale, g.causal, optional(in, 3) != nullptr,
                   stream, op))
    return;
  Buffers b = buffers(g, v.dtype, false, op, stream);
  probabilities(g, q, k, optional(in, 3), b, v.dtype, op, stream);
  Gemm m; // O = P V
  m.m = g.t, m.n = g.e, m.k = g.s;
  m.a = b.pLow, m.aType = v.dtype, m.lda = g.s, m.strideA = g.t * g.s;
  m.b = v.data, m.bType = v.dtype, m.ldb = g.e, m.strideB = g.s * g.e;
  m.c = o.data, m.cType = o.dtype, m.ldc = g.e, m.strideC = g.t * g.e;
  m.batch = g.batch;
  gemm(m, stream, op);
  checkLaunch(op.data());
}

// in: q, k, v, g[, mask]; out: dq, dk, dv (each may be null).
void attentionBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.scaled_dot_product_attention_backward";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &gy = required(op, in, 3);
  const TensorRef *dq = optional(out, 0), *dk = optional(out, 1),
                  *dv = optional(out, 2);
  Geo g =
      kernels::detail::attentionBackward(op, q, k, v, gy, dq, dk, dv, attrs);
  if (flashBackward(q, k, v, gy, dq, dk, dv, g.scale, g.causal,
                    optional(in, 4) != nullptr, stream, op))
    return;
  DType low = q.dtype;
  Buffers b = buffers(g, low, true, op, stream);
  probabilities(g, q, k, optional(in, 4), b, low, op, stream);
  if (dv) {
    Gemm m; // dV = P^T G
    m.transA = true;
    m.m = g.s, m.n = g.e, m.k = g.t;
    m.a = b.pLow, m.aType = low, m.lda = g.s, m.strideA = g.t * g.s;
    m.b = gy.data, m.bType = gy.dtype, m.ldb = g.e, m.strideB = g.t * g.e;
    m.c = dv->data, m.cType = dv->dtype, m.ldc = g.e, m.strideC = g.s * g.e;
    m.batch = g.batch;
    gemm(m, stream, op);
  }
  Gemm m; // dP = G V^T (FP32)
  m.transB = true;
  m.m = g.t, m.n = g.s, m.k = g.e;
  m.a = gy.data, m.aType = gy.dtype, m.lda = g.e, m.strideA = g.t * g.e;
  m.b = v.data, m.bType = v.dtype, m.ldb = g.e, m.strideB = g.s * g.e;
  m.c = b.dp32, m.cType = DType::F32, m.ldc = g.s, m.strideC = g.t * g.s;
  m.batch = g.batch;
  gemm(m, stream, op);
  softmaxBackwardRows<<<unsigned(g.batch * g.t), 256, 0, stream>>>(
      b.p32, b.dp32, b.dsLow, int(low), g.s);
  if (dq) {
    Gemm d; // dQ = scale dS K
    d.m = g.t, d.n = g.d, d.k = g.s;
    d.a = b.dsLow, d.aType = low, d.lda = g.s, d.strideA = g.t * g.s;
    d.b = k.data, d.bType = k.dtype, d.ldb = g.d, d.strideB = g.s * g.d;
    d.c = dq->data, d.cType = dq->dtype, d.ldc = g.d, d.strideC = g.t * g.d;
    d.batch = g.batch;
    d.alpha = g.scale;
    gemm(d, stream, op);
  }
  if (dk) {
    Gemm d; // dK = scale dS^T Q
    d.transA = true;
    d.m = g.s, d.n = g.d, d.k = g.t;
    d.a = b.dsLow, d.aType = low, d.lda = g.s, d.strideA = g.t * g.s;
    d.b = q.data, d.bType = q.dtype, d.ldb = g.d, d.strideB = g.t * g.d;
    d.c = dk->data, d.cType = dk->dtype, d.ldc = g.d, d.strideC = g.s * g.d;
    d.batch = g.batch;
    d.alpha = g.scale;
    gemm(d, stream, op);
  }
  checkLaunch(op.data());
}

// packed_attention (runtime/kernels/PackedAttention.h). Strided (default):
// cuDNN's flash attention reads q, k, v inside qkv and writes o, or dqkv,
// in place. Where that path is not taken (f32, head dims cuDNN does not
// take, AMPC_CUDA_ATTENTION=math, cuDNN refusing) and with
// AMPC_CUDA_PACKED_ATTENTION=copies: one transpose gathers q, k, v into
// [B, H, T, D] temporaries, the attention above runs on them (flash or
// math as it chooses), one transpose puts o (dq, dk, dv) in place.

void transposeKernel(std::span<const TensorRef>, std::span<const TensorRef>,
                     const Attrs &, cudaStream_t);

namespace {

using kernels::detail::PackedAttn;

// AMPC_CUDA_PACKED_ATTENTION, read at each call: 0 strided, 1 copies.
bool packedCopies() {
  return kernels::envChoice("AMPC_CUDA_PACKED_ATTENTION",
                            {"strided", "copies"}) == 1;
}

// The copy path's temporaries, apart from scratch() (which the attention
// and its GEMMs use meanwhile); grows on the warm-up step only.
char *copyBuffer(size_t bytes, std::string_view op, cudaStream_t stream) {
  static void *buffer = nullptr;
  static size_t capacity = 0;
  if (bytes <= capacity)
    return static_cast<char *>(buffer);
  failIfCapturing(stream, op, "packed attention's buffer cannot grow");
  // The old buffer is kept: a graph captured before may still use it (as
  // scratch()).
  check(cudaMalloc(&buffer, bytes), "cudaMalloc(packed attention buffer)");
  capacity = bytes;
  return static_cast<char *>(buffer);
}

constexpr size_t align256(size_t n) { return (n + 255) & ~size_t(255); }

} // namespace

void packedAttentionKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out, const Attrs &attrs,
                           cudaStream_t stream) {
  constexpr std::string_view op = "graph.packed_attention";
  const TensorRef &qkv = required(op, in, 0), &o = required(op, out, 0);
  PackedAttn g = kernels::detail::packedAttention(op, qkv, o, attrs);
  if (!packedCopies() &&
      flashPackedForward(qkv, o, g.h, g.scale, g.causal, stream, op))
    return;
  size_t es = dtypeSize(qkv.dtype), part = align256(size_t(g.part()) * es);
  char *buf = copyBuffer(4 * part, op, stream);
  char *heads = buf, *oh = buf + 3 * part;
  TensorRef src = g.packed(qkv.data, qkv.dtype),
            all = g.heads3(heads, qkv.dtype);
  transposeKernel({&src, 1}, {&all, 1},
                  Attrs{{"perm", kernels::detail::gatherPerm()}}, stream);
  TensorRef qkvh[3] = {g.heads(heads, 0, qkv.dtype),
                       g.heads(heads, 1, qkv.dtype),
                       g.heads(heads, 2, qkv.dtype)};
  TensorRef ohRef = makeRef(oh, o.dtype, {g.b, g.h, g.t, g.d});
  attentionKernel(qkvh, {&ohRef, 1}, attrs, stream);
  TensorRef dst = g.rows(o.data, o.dtype);
  transposeKernel({&ohRef, 1}, {&dst, 1},
                  Attrs{{"perm", kernels::detail::headSwap()}}, stream);
}

// in: qkv, g; out: dqkv.
void packedAttentionBackwardKernel(std::span<const TensorRef> in,
                                   std::span<const TensorRef> out,
                                   const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.packed_attention_backward";
  const TensorRef &qkv = required(op, in, 0), &gy = required(op, in, 1),
                  &dqkv = required(op, out, 0);
  PackedAttn g = kernels::detail::packedAttention(op, qkv, gy, attrs);
  if (dqkv.numel() != qkv.numel())
    fail(op, "dqkv must have qkv's shape");
  if (!packedCopies() && flashPackedBackward(qkv, gy, dqkv, g.h, g.scale,
                                             g.causal, stream, op))
    return;
  size_t es = dtypeSize(qkv.dtype), part = align256(size_t(g.part()) * es);
  // q, k, v | g | dq, dk, dv, each part 256-byte aligned (g.heads indexes
  // by the unaligned size, so the three sit in one 3 * part block).
  size_t three = align256(size_t(3 * g.part()) * es);
  char *buf = copyBuffer(2 * three + part, op, stream);
  char *heads = buf, *gh = buf + three, *dheads = gh + part;
  TensorRef src = g.packed(qkv.data, qkv.dtype),
            all = g.heads3(heads, qkv.dtype);
  transposeKernel({&src, 1}, {&all, 1},
                  Attrs{{"perm", kernels::detail::gatherPerm()}}, stream);
  TensorRef gRows = g.rows(gy.data, gy.dtype),
            ghRef = makeRef(gh, gy.dtype, {g.b, g.h, g.t, g.d});
  transposeKernel({&gRows, 1}, {&ghRef, 1},
                  Attrs{{"perm", kernels::detail::headSwap()}}, stream);
  TensorRef bin[4] = {g.heads(heads, 0, qkv.dtype),
                      g.heads(heads, 1, qkv.dtype),
                      g.heads(heads, 2, qkv.dtype), ghRef};
  TensorRef bout[3] = {g.heads(dheads, 0, dqkv.dtype),
                       g.heads(dheads, 1, dqkv.dtype),
                       g.heads(dheads, 2, dqkv.dtype)};
  attentionBackwardKernel(bin, bout, attrs, stream);
  TensorRef dall = g.heads3(dheads, dqkv.dtype),
            dst = g.packed(dqkv.data, dqkv.dtype);
  transposeKernel({&dall, 1}, {&dst, 1},
                  Attrs{{"perm", kernels::detail::scatterPerm()}}, stream);
}

// packed_attention_stats and its backward (graph-save-attention-stats).
// On the strided flash path the forward also writes the statistics and the
// backward reads them with o: no forward again. Elsewhere (the paths
// packed_attention takes) the forward leaves the statistics unwritten and
// the backward is packed_attention_backward's; so does the backward with
// AMPC_CUDA_ATTENTION_STATS=recompute (the forward still writes them).

namespace {

// AMPC_CUDA_ATTENTION_STATS, read at each call: 0 saved, 1 recompute.
bool recomputeStats() {
  return kernels::envChoice("AMPC_CUDA_ATTENTION_STATS",
                            {"saved", "recompute"}) == 1;
}

} // namespace

// out: o, stats.
void packedAttentionStatsKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.packed_attention_stats";
  const TensorRef &qkv = required(op, in, 0), &o = required(op, out, 0),
                  &stats = required(op, out, 1);
  PackedAttn g = kernels::detail::packedAttention(op, qkv, o, attrs);
  if (!packedCopies() && flashPackedForwardStats(qkv, o, stats, g.h, g.scale,
                                                 g.causal, stream, op))
    return;
  packedAttentionKernel(in.first(1), out.first(1), attrs, stream);
}

// in: qkv, o, stats, g; out: dqkv.
void packedAttentionStatsBackwardKernel(std::span<const TensorRef> in,
                                        std::span<const TensorRef> out,
                                        const Attrs &attrs,
                                        cudaStream_t stream) {
  constexpr std::string_view op = "graph.packed_attention_stats_backward";
  const TensorRef &qkv = required(op, in, 0), &o = required(op, in, 1),
                  &stats = required(op, in, 2), &gy = required(op, in, 3),
                  &dqkv = required(op, out, 0);
  PackedAttn g = kernels::detail::packedAttention(op, qkv, gy, attrs);
  if (dqkv.numel() != qkv.numel())
    fail(op, "dqkv must have qkv's shape");
  if (!packedCopies() && !recomputeStats() &&
      flashPackedBackwardSaved(qkv, o, stats, gy, dqkv, g.h, g.scale,
                               g.causal, stream, op))
    return;
  TensorRef args[2] = {qkv, gy};
  packedAttentionBackwardKernel(args, out, attrs, stream);
}

// scaled_dot_product_attention_stats and its backward: the same on separate
// q, k, v. Off the flash path the forward leaves the statistics unwritten
// and the backward is scaled_dot_product_attention_backward's.

// in: q, k, v; out: o, stats.
void attentionStatsKernel(std::span<const TensorRef> in,
                          std::span<const TensorRef> out, const Attrs &attrs,
                          cudaStream_t stream) {
  constexpr std::string_view op = "graph.scaled_dot_product_attention_stats";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &o = required(op, out, 0),
                  &stats = required(op, out, 1);
  Geo g = kernels::detail::attentionForward(op, q, k, v, o, attrs);
  if (flashForwardStats(q, k, v, o, stats, g.scale, g.causal, stream, op))
    return;
  attentionKernel(in.first(3), out.first(1), attrs, stream);
}

// in: q, k, v, o, stats, g; out: dq, dk, dv.
void attentionStatsBackwardKernel(std::span<const TensorRef> in,
                                  std::span<const TensorRef> out,
                                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op =
      "graph.scaled_dot_product_attention_stats_backward";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &o = required(op, in, 3),
                  &stats = required(op, in, 4), &gy = required(op, in, 5);
  const TensorRef *dq = optional(out, 0), *dk = optional(out, 1),
                  *dv = optional(out, 2);
  Geo g =
      kernels::detail::attentionBackward(op, q, k, v, gy, dq, dk, dv, attrs);
  // Without one of the gradients, the recomputing path (its scratch holds
  // the gradient nobody asked for).
  if (!recomputeStats() && dq && dk && dv &&
      flashBackwardSaved(q, k, v, o, stats, gy, *dq, *dk, *dv, g.scale,
                         g.causal, stream, op))
    return;
  TensorRef args[4] = {q, k, v, gy};
  attentionBackwardKernel(args, out, attrs, stream);
}

} // namespace ampc::cuda
