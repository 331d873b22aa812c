//===- Attention.cpp - scaled_dot_product_attention and its backward -------===//
//
// q [B, Hq, T, D], k [B, Hkv, S, D], v [B, Hkv, S, E]; query head h reads
// kv head h / (Hq/Hkv) (grouped-query attention). With `causal`, query i
// sees keys j <= i (PyTorch's is_causal: a top-left aligned lower triangle).
// The optional mask (broadcast to [B, Hq, T, S]) keeps keys where an integer
// mask is nonzero or adds a float one to the scores; a row with no visible
// key gives 0 (PyTorch 2.15).
// Dot products accumulate like GEMMs (FP32 under typed numerics); the
// softmax probabilities stay unrounded.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "runtime/kernels/AttentionStats.h"

#include <cmath>

using namespace ampc::interp;

namespace {

struct AttnGeom {
  int64_t bh, hq, group, t, s, d, e;
  double scale;
  bool causal;
  const Tensor *mask = nullptr;
  int64_t ms[4] = {0, 0, 0, 0}; // the mask's strides broadcast to [B,Hq,T,S]
  AttnGeom(const OpContext &ctx, std::span<const Tensor> in, size_t maskAt) {
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    bh = q.shape[0] * q.shape[1], hq = q.shape[1], t = q.shape[2];
    d = q.shape[3], group = q.shape[1] / k.shape[1];
    s = v.shape[2], e = v.shape[3];
    scale = ctx.getOptionalFloat("scale").value_or(1.0 / std::sqrt(double(d)));
    causal = ctx.getFlag("causal");
    if (in.size() <= maskAt)
      return;
    mask = &in[maskAt];
    int64_t full[4] = {q.shape[0], hq, t, s}, stride = 1;
    for (int64_t r = mask->rank() - 1, a = 3; r >= 0; --r, --a) {
      ms[a] = mask->shape[r] == full[a] ? stride : 0;
      stride *= mask->shape[r];
    }
  }
  int64_t keys(int64_t i) const { return causal ? std::min(i + 1, s) : s; }
  // The kv head query head |h| reads.
  int64_t kv(int64_t h) const { return h / group; }
  // The mask's additive term for (query head h, query i, key j).
  double bias(int64_t h, int64_t i, int64_t j) const {
    if (!mask)
      return 0.0;
    int64_t at = (h / hq) * ms[0] + (h % hq) * ms[1] + i * ms[2] + j * ms[3];
    if (mask->isFloat())
      return mask->f[at];
    return mask->i[at] != 0 ? 0.0 : -INFINITY;
  }
};

// The probabilities of query row |i| of head |h| over its visible keys.
std::vector<double> probs(const OpContext &ctx, const AttnGeom &g,
                          const Tensor &q, const Tensor &k, int64_t h,
                          int64_t i) {
  int64_t n = g.keys(i), hk = g.kv(h);
  std::vector<double> p(n);
  double m = -INFINITY, sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    Accum acc(ctx);
    for (int64_t l = 0; l < g.d; ++l)
      acc.add(q.f[(h * g.t + i) * g.d + l] * k.f[(hk * g.s + j) * g.d + l]);
    p[j] = acc.get() * g.scale + g.bias(h, i, j);
    m = std::max(m, p[j]);
  }
  if (m == -INFINITY) // every key masked: attends to nothing
    return std::vector<double>(n, 0.0);
  for (double &x : p)
    sum += (x = std::exp(x - m));
  for (double &x : p)
    x /= sum;
  return p;
}

KernelResult attention(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &q = in[0], &k = in[1], &v = in[2];
  AttnGeom g(ctx, in, 3);
  Tensor out = ctx.makeResult();
  for (int64_t h = 0; h < g.bh; ++h)
    for (int64_t i = 0; i < g.t; ++i) {
      std::vector<double> p = probs(ctx, g, q, k, h, i);
      for (int64_t c = 0; c < g.e; ++c) {
        Accum acc(ctx);
        for (int64_t j = 0; j < int64_t(p.size()); ++j)
          acc.add(p[j] * v.f[(g.kv(h) * g.s + j) * g.e + c]);
        out.f[(h * g.t + i) * g.e + c] = acc.get();
      }
    }
  return one(std::move(out));
}

// scaled_dot_product_attention_backward(q, k, v, g) -> dq, dk, dv:
//   dv = P^T g, dP = g v^T, dS = P * (dP - rowsum(P * dP)),
//   dq = scale dS k, dk = scale dS^T q.
// Into dq, dk, dv (zeros, q's, k's and v's sizes).
void attentionBackwardInto(const OpContext &ctx, std::span<const Tensor> in,
                           Tensor &dq, Tensor &dk, Tensor &dv) {
  const Tensor &q = in[0], &k = in[1], &v = in[2], &go = in[3];
  AttnGeom g(ctx, in, 4);
  for (int64_t h = 0; h < g.bh; ++h)
    for (int64_t i = 0; i < g.t; ++i) {
      std::vector<double> p = probs(ctx, g, q, k, h, i);
      int64_t n = int64_t(p.size()), hk = g.kv(h);
      const double *gi = go.f.data() + (h * g.t + i) * g.e;
      std::vector<double> dp(n);
      double dot = 0;
      for (int64_t j = 0; j < n; ++j) {
        Accum acc(ctx);
        for (int64_t c = 0; c < g.e; ++c)
          acc.add(gi[c] * v.f[(hk * g.s + j) * g.e + c]);
        dp[j] = acc.get();
        dot += p[j] * dp[j];
      }
      for (int64_t j = 0; j < n; ++j) {
        double ds = p[j] * (dp[j] - dot) * g.scale;
        for (int64_t l = 0; l < g.d; ++l) {
          accumulate(ctx, dq.f[(h * g.t + i) * g.d + l],
                     ds * k.f[(hk * g.s + j) * g.d + l]);
          accumulate(ctx, dk.f[(hk * g.s + j) * g.d + l],
                     ds * q.f[(h * g.t + i) * g.d + l]);
        }
        for (int64_t c = 0; c < g.e; ++c)
          accumulate(ctx, dv.f[(hk * g.s + j) * g.e + c], p[j] * gi[c]);
      }
    }
}

KernelResult attentionBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  Tensor dq = ctx.makeResult(0), dk = ctx.makeResult(1),
         dv = ctx.makeResult(2);
  attentionBackwardInto(ctx, in, dq, dk, dv);
  std::vector<Tensor> r;
  r.push_back(std::move(dq));
  r.push_back(std::move(dk));
  r.push_back(std::move(dv));
  return r;
}

// packed_attention: qkv [B, T, 3, H, D] <-> q, k, v [B, H, T, D]. The
// attention above on the gathered heads, so the result is the unfused
// graph's (its slices and transposes only move values).
struct Packed {
  int64_t b, t, h, d;
  Packed(const OpContext &ctx, const Tensor &qkv)
      : b(qkv.shape[0]), t(qkv.shape[1]), h(ctx.getInt("heads", 1)),
        d(qkv.shape[2] / (3 * h)) {}
  // Offset of (part p, batch i, head j, position s, element c) in qkv.
  int64_t packed(int64_t p, int64_t i, int64_t j, int64_t s, int64_t c) const {
    return (((i * t + s) * 3 + p) * h + j) * d + c;
  }
  // The same in a [B, H, T, D] tensor, and in a [B, T, H, D] one.
  int64_t heads(int64_t i, int64_t j, int64_t s, int64_t c) const {
    return ((i * h + j) * t + s) * d + c;
  }
  int64_t rows(int64_t i, int64_t j, int64_t s, int64_t c) const {
    return ((i * t + s) * h + j) * d + c;
  }
  // Visits every (i, j, s, c).
  template <typename F> void each(F f) const {
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < h; ++j)
        for (int64_t s = 0; s < t; ++s)
          for (int64_t c = 0; c < d; ++c)
            f(i, j, s, c);
  }
  std::vector<Tensor> split(const Tensor &qkv) const {
    std::vector<Tensor> r(3, Tensor({b, h, t, d}, qkv.type));
    each([&](int64_t i, int64_t j, int64_t s, int64_t c) {
      for (int64_t p = 0; p < 3; ++p)
        r[p].f[heads(i, j, s, c)] = qkv.f[packed(p, i, j, s, c)];
    });
    return r;
  }
};

KernelResult packedAttention(const OpContext &ctx,
                             std::span<const Tensor> in) {
  Packed pk(ctx, in[0]);
  std::vector<Tensor> qkv = pk.split(in[0]);
  KernelResult o = attention(ctx, qkv); // [B, H, T, D] values in o's type
  if (failed(o))
    return o;
  Tensor out = ctx.makeResult();
  const Tensor &oh = (*o)[0];
  pk.each([&](int64_t i, int64_t j, int64_t s, int64_t c) {
    out.f[pk.rows(i, j, s, c)] = oh.f[pk.heads(i, j, s, c)];
  });
  return one(std::move(out));
}

KernelResult packedAttentionBackward(const OpContext &ctx,
                                     std::span<const Tensor> in) {
  Packed pk(ctx, in[0]);
  std::vector<Tensor> args = pk.split(in[0]);
  Tensor gh({pk.b, pk.h, pk.t, pk.d}, in[1].type);
  pk.each([&](int64_t i, int64_t j, int64_t s, int64_t c) {
    gh.f[pk.heads(i, j, s, c)] = in[1].f[pk.rows(i, j, s, c)];
  });
  args.push_back(std::move(gh));
  std::vector<Tensor> d(3, Tensor({pk.b, pk.h, pk.t, pk.d}, in[0].type));
  attentionBackwardInto(ctx, args, d[0], d[1], d[2]);
  Tensor dqkv = ctx.makeResult();
  pk.each([&](int64_t i, int64_t j, int64_t s, int64_t c) {
    for (int64_t p = 0; p < 3; ++p)
      dqkv.f[pk.packed(p, i, j, s, c)] = d[p].f[pk.heads(i, j, s, c)];
  });
  return one(std::move(dqkv));
}

// packed_attention_stats: packed_attention's result and the log-sum-exp of
// each row (runtime/kernels/AttentionStats.h).
KernelResult packedAttentionStats(const OpContext &ctx,
                                  std::span<const Tensor> in) {
  KernelResult o = packedAttention(ctx, in.first(1));
  if (failed(o))
    return o;
  Packed pk(ctx, in[0]);
  Tensor stats = ctx.makeResult(1);
  double scale =
      ctx.getOptionalFloat("scale").value_or(1.0 / std::sqrt(double(pk.d)));
  ampc::kernels::detail::packedLogSumExp(in[0].f.data(), pk.b, pk.t, pk.h,
                                         pk.d, scale, ctx.getFlag("causal"),
                                         stats.f.data());
  return several(std::move((*o)[0]), std::move(stats));
}

// packed_attention_stats_backward (qkv, o, stats, g): packed_attention_
// backward of qkv and g; o and stats are the forward's, which it recomputes.
KernelResult packedAttentionStatsBackward(const OpContext &ctx,
                                          std::span<const Tensor> in) {
  Tensor args[2] = {in[0], in[3]};
  return packedAttentionBackward(ctx, args);
}

// scaled_dot_product_attention_stats (q, k, v): the attention's result and
// the log-sum-exp of each query row (runtime/kernels/AttentionStats.h).
KernelResult attentionStats(const OpContext &ctx, std::span<const Tensor> in) {
  KernelResult o = attention(ctx, in.first(3));
  if (failed(o))
    return o;
  const Tensor &q = in[0], &k = in[1];
  AttnGeom g(ctx, in.first(3), 3);
  Tensor stats = ctx.makeResult(1);
  ampc::kernels::detail::attentionLogSumExp(
      q.f.data(), k.f.data(), q.shape[0], g.hq, k.shape[1], g.t, g.s, g.d,
      g.scale, g.causal, stats.f.data());
  return several(std::move((*o)[0]), std::move(stats));
}

// scaled_dot_product_attention_stats_backward (q, k, v, o, stats, g): the
// backward of q, k, v and g; o and stats are the forward's, recomputed.
KernelResult attentionStatsBackward(const OpContext &ctx,
                                    std::span<const Tensor> in) {
  Tensor args[4] = {in[0], in[1], in[2], in[5]};
  return attentionBackward(ctx, args);
}

} // namespace

void ampc::interp::registerAttentionKernels(KernelTable &t) {
  t["graph.scaled_dot_product_attention"] = attention;
  t["graph.scaled_dot_product_attention_backward"] = attentionBackward;
  t["graph.packed_attention"] = packedAttention;
  t["graph.packed_attention_backward"] = packedAttentionBackward;
  t["graph.packed_attention_stats"] = packedAttentionStats;
  t["graph.packed_attention_stats_backward"] = packedAttentionStatsBackward;
  t["graph.scaled_dot_product_attention_stats"] = attentionStats;
  t["graph.scaled_dot_product_attention_stats_backward"] =
      attentionStatsBackward;
}
