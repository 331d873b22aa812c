//===- Attention.cpp - scaled_dot_product_attention and its backward ------===//
//
// Per kv head: P = softmax(scale * Q K^T [+ mask]), O = P V, with the GEMMs
// in cblas_sgemm (FP32 accumulation) and the softmax in float (exp from
// runtime/numerics/Exp.h, row sums in RowMath.h's lanes). Under
// grouped-query attention the query heads a kv head serves are one GEMM's
// rows (AttnGeom). The causal mask is top-left aligned (key j > query i is
// masked), as torch's is_causal; the optional mask is a keep-mask (integer,
// nonzero keeps) or an additive float bias; a row with every key masked
// gives P = 0 (PyTorch 2.15). scale defaults to 1/sqrt(D).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/cpu/RowMath.h"
#include "runtime/kernels/AttentionStats.h"
#include "runtime/kernels/PackedAttention.h"
#include "runtime/numerics/Exp.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// The optional mask as a float bias (0 or -inf for a keep-mask), indexed
// through its broadcast strides.
class MaskIn {
public:
  MaskIn(std::string_view op, const TensorRef &q, const TensorRef &k,
         const TensorRef *m) {
    if (!m)
      return;
    view_ = attentionMask(op, q, k, *m);
    bias_.resize(size_t(m->numel()));
    if (view_.additive) {
      FloatIn f(*m);
      std::copy(f.data(), f.data() + m->numel(), bias_.begin());
      return;
    }
    for (int64_t i = 0; i < m->numel(); ++i) {
      bool keep = m->dtype == DType::I64
                      ? static_cast<const int64_t *>(m->data)[i] != 0
                      : static_cast<const int32_t *>(m->data)[i] != 0;
      bias_[size_t(i)] = keep ? 0.0f : -INFINITY;
    }
  }
  bool present() const { return !bias_.empty(); }
  float at(int64_t h, int64_t i, int64_t j) const {
    return bias_[size_t(view_.offset(h, i, j))];
  }

private:
  AttnMask view_;
  std::vector<float> bias_;
};

// P [T, S] for kv head |b| (its group of query heads' rows).
void probabilities(const AttnGeom &g, const MaskIn &mask, int64_t b,
                   const float *q, const float *k, float *p) {
  sgemm(false, true, g.t, g.s, g.d, g.scale, q, g.d, k, g.d, 0.0f, p, g.s);
  for (int64_t r = 0; r < g.t; ++r) {
    float *row = p + r * g.s;
    int64_t i = r % g.tq;
    int64_t n = g.causal ? std::min(i + 1, g.s) : g.s;
    if (mask.present()) {
      int64_t h = b * g.group + r / g.tq;
      for (int64_t j = 0; j < n; ++j)
        row[j] += mask.at(h, i, j);
    }
    float mx = rowMax(row, n);
    if (mx == -INFINITY) // every key masked: attends to nothing
      n = 0;
    for (int64_t j = 0; j < n; ++j) // a loop of its own, which vectorizes
      row[j] = num::expFloat(row[j] - mx);
    float sum = rowSum(row, n);
    for (int64_t j = 0; j < n; ++j)
      row[j] /= sum;
    for (int64_t j = n; j < g.s; ++j)
      row[j] = 0.0f;
  }
}

} // namespace

void attentionKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.scaled_dot_product_attention";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &o = required(op, out, 0);
  AttnGeom g = attentionForward(op, q, k, v, o, attrs);
  MaskIn mask(op, q, k, optional(in, 3));
  FloatIn fq(q), fk(k), fv(v);
  FloatOut fo(o);
  std::vector<float> p(size_t(g.t * g.s));
  for (int64_t b = 0; b < g.batch; ++b) {
    probabilities(g, mask, b, fq.data() + b * g.t * g.d,
                  fk.data() + b * g.s * g.d, p.data());
    sgemm(false, false, g.t, g.e, g.s, 1.0f, p.data(), g.s,
          fv.data() + b * g.s * g.e, g.e, 0.0f, fo.data() + b * g.t * g.e,
          g.e);
  }
  fo.commit();
}

// in: q, k, v, g[, mask]; out: dq, dk, dv. With P recomputed (dK and dV
// sum over a kv head's query heads: they are the GEMMs' rows):
//   dV = P^T G, dP = G V^T, dS = P * (dP - rowsum(P * dP)),
//   dQ = scale dS K, dK = scale dS^T Q.
void attentionBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.scaled_dot_product_attention_backward";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &gy = required(op, in, 3);
  const TensorRef *dq = optional(out, 0), *dk = optional(out, 1),
                  *dv = optional(out, 2);
  AttnGeom g = attentionBackward(op, q, k, v, gy, dq, dk, dv, attrs);
  MaskIn mask(op, q, k, optional(in, 4));
  FloatIn fq(q), fk(k), fv(v), fg(gy);
  std::vector<float> gq(size_t(q.numel())), gk(size_t(k.numel())),
      gv(size_t(v.numel())), p(size_t(g.t * g.s)), dp(size_t(g.t * g.s));
  for (int64_t b = 0; b < g.batch; ++b) {
    const float *qb = fq.data() + b * g.t * g.d, *kb = fk.data() + b * g.s * g.d,
                *vb = fv.data() + b * g.s * g.e, *gb = fg.data() + b * g.t * g.e;
    probabilities(g, mask, b, qb, kb, p.data());
    sgemm(true, false, g.s, g.e, g.t, 1.0f, p.data(), g.s, gb, g.e, 0.0f,
          gv.data() + b * g.s * g.e, g.e);
    sgemm(false, true, g.t, g.s, g.e, 1.0f, gb, g.e, vb, g.e, 0.0f, dp.data(),
          g.s);
    for (int64_t i = 0; i < g.t; ++i) {
      float *pr = p.data() + i * g.s, *dr = dp.data() + i * g.s;
      float dot = rowDot(pr, dr, g.s);
      for (int64_t j = 0; j < g.s; ++j)
        dr[j] = pr[j] * (dr[j] - dot); // dS, in place
    }
    sgemm(false, false, g.t, g.d, g.s, g.scale, dp.data(), g.s, kb, g.d, 0.0f,
          gq.data() + b * g.t * g.d, g.d);
    sgemm(true, false, g.s, g.d, g.t, g.scale, dp.data(), g.s, qb, g.d, 0.0f,
          gk.data() + b * g.s * g.d, g.d);
  }
  if (dq)
    narrow(gq.data(), *dq);
  if (dk)
    narrow(gk.data(), *dk);
  if (dv)
    narrow(gv.data(), *dv);
}

} // namespace ampc::cpu

// packed_attention: the copy path of runtime/kernels/PackedAttention.h. One
// transpose gathers q, k, v out of qkv, the attention above runs on them,
// one transpose puts o in place: bitwise the unfused graph, whose slices and
// transposes are the same exact copies.
namespace ampc::cpu {

void packedAttentionKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out,
                           const Attrs &attrs) {
  constexpr std::string_view op = "graph.packed_attention";
  const TensorRef &qkv = required(op, in, 0), &o = required(op, out, 0);
  PackedAttn g = packedAttention(op, qkv, o, attrs);
  size_t es = dtypeSize(qkv.dtype);
  std::vector<char> heads(size_t(3 * g.part()) * es), oh(size_t(g.part()) * es);
  TensorRef src = g.packed(qkv.data, qkv.dtype),
            all = g.heads3(heads.data(), qkv.dtype);
  transposeKernel({&src, 1}, {&all, 1}, Attrs{{"perm", gatherPerm()}});
  TensorRef qkvh[3] = {g.heads(heads.data(), 0, qkv.dtype),
                       g.heads(heads.data(), 1, qkv.dtype),
                       g.heads(heads.data(), 2, qkv.dtype)};
  TensorRef ohRef = makeRef(oh.data(), o.dtype, {g.b, g.h, g.t, g.d});
  attentionKernel(qkvh, {&ohRef, 1}, attrs);
  TensorRef dst = g.rows(o.data, o.dtype);
  transposeKernel({&ohRef, 1}, {&dst, 1}, Attrs{{"perm", headSwap()}});
}

// in: qkv, g; out: dqkv. g to [B, H, T, D], the attention backward into
// [3, B, H, T, D], one transpose into d(qkv).
void packedAttentionBackwardKernel(std::span<const TensorRef> in,
                                   std::span<const TensorRef> out,
                                   const Attrs &attrs) {
  constexpr std::string_view op = "graph.packed_attention_backward";
  const TensorRef &qkv = required(op, in, 0), &gy = required(op, in, 1),
                  &dqkv = required(op, out, 0);
  PackedAttn g = packedAttention(op, qkv, gy, attrs);
  if (dqkv.numel() != qkv.numel())
    fail(op, "dqkv must have qkv's shape");
  size_t es = dtypeSize(qkv.dtype);
  std::vector<char> heads(size_t(3 * g.part()) * es),
      gh(size_t(g.part()) * es), dheads(size_t(3 * g.part()) * es);
  TensorRef src = g.packed(qkv.data, qkv.dtype),
            all = g.heads3(heads.data(), qkv.dtype);
  transposeKernel({&src, 1}, {&all, 1}, Attrs{{"perm", gatherPerm()}});
  TensorRef gRows = g.rows(gy.data, gy.dtype),
            ghRef = makeRef(gh.data(), gy.dtype, {g.b, g.h, g.t, g.d});
  transposeKernel({&gRows, 1}, {&ghRef, 1}, Attrs{{"perm", headSwap()}});
  TensorRef bin[4] = {g.heads(heads.data(), 0, qkv.dtype),
                      g.heads(heads.data(), 1, qkv.dtype),
                      g.heads(heads.data(), 2, qkv.dtype), ghRef};
  TensorRef bout[3] = {g.heads(dheads.data(), 0, dqkv.dtype),
                       g.heads(dheads.data(), 1, dqkv.dtype),
                       g.heads(dheads.data(), 2, dqkv.dtype)};
  attentionBackwardKernel(bin, bout, attrs);
  TensorRef dall = g.heads3(dheads.data(), dqkv.dtype),
            dst = g.packed(dqkv.data, dqkv.dtype);
  transposeKernel({&dall, 1}, {&dst, 1}, Attrs{{"perm", scatterPerm()}});
}

// packed_attention_stats: packed_attention's result (the same bits) and the
// log-sum-exp of each row (runtime/kernels/AttentionStats.h) into out[1].
void packedAttentionStatsKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs) {
  constexpr std::string_view op = "graph.packed_attention_stats";
  const TensorRef &qkv = required(op, in, 0), &o = required(op, out, 0),
                  &stats = required(op, out, 1);
  PackedAttn g = packedAttention(op, qkv, o, attrs);
  if (stats.dtype != DType::F32 || stats.numel() != g.b * g.h * g.t)
    fail(op, "stats must be f32 [B, heads, T]");
  packedAttentionKernel(in.first(1), out.first(1), attrs);
  FloatIn x(qkv);
  kernels::detail::packedLogSumExp(x.data(), g.b, g.t, g.h, g.d, g.scale,
                                   g.causal, static_cast<float *>(stats.data));
}

// in: qkv, o, stats, g; out: dqkv. packed_attention_backward of qkv and g
// (the same bits): this library recomputes what o and stats hold.
void packedAttentionStatsBackwardKernel(std::span<const TensorRef> in,
                                        std::span<const TensorRef> out,
                                        const Attrs &attrs) {
  constexpr std::string_view op = "graph.packed_attention_stats_backward";
  TensorRef args[2] = {required(op, in, 0), required(op, in, 3)};
  packedAttentionBackwardKernel(args, out, attrs);
}

} // namespace ampc::cpu

// scaled_dot_product_attention_stats and its backward (graph-save-
// attention-stats on attention over separate q, k, v): the attention's
// result and gradients (the same bits), and the statistics from the FP64
// reference; the backward recomputes what o and stats hold.
namespace ampc::cpu {

// in: q, k, v; out: o, stats [B, Hq, T].
void attentionStatsKernel(std::span<const TensorRef> in,
                          std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.scaled_dot_product_attention_stats";
  const TensorRef &q = required(op, in, 0), &k = required(op, in, 1),
                  &v = required(op, in, 2), &o = required(op, out, 0),
                  &stats = required(op, out, 1);
  AttnGeom g = attentionForward(op, q, k, v, o, attrs);
  if (stats.dtype != DType::F32 || stats.numel() * q.shape[q.rank - 1] !=
                                       q.numel())
    fail(op, "stats must be f32 [B, Hq, T]");
  attentionKernel(in.first(3), out.first(1), attrs);
  FloatIn fq(q), fk(k);
  // Per kv head, its |group| query heads: [batch, group, tq, D] against
  // [batch, 1, S, D].
  kernels::detail::attentionLogSumExp(fq.data(), fk.data(), g.batch, g.group,
                                      1, g.tq, g.s, g.d, g.scale, g.causal,
                                      static_cast<float *>(stats.data));
}

// in: q, k, v, o, stats, g; out: dq, dk, dv.
void attentionStatsBackwardKernel(std::span<const TensorRef> in,
                                  std::span<const TensorRef> out,
                                  const Attrs &attrs) {
  constexpr std::string_view op =
      "graph.scaled_dot_product_attention_stats_backward";
  TensorRef args[4] = {required(op, in, 0), required(op, in, 1),
                       required(op, in, 2), required(op, in, 5)};
  attentionBackwardKernel(args, out, attrs);
}

} // namespace ampc::cpu
