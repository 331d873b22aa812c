//===- AttentionStats.h - The softmax statistics attention saves -*- C++ -*-===//
//
// graph.packed_attention_stats and scaled_dot_product_attention_stats
// return, beside the attention's result, the log-sum-exp of each query
// row's scaled scores, lse [B, H, T] in f32:
// max_j s_j + log(sum_j exp(s_j - max)), s_j = scale * q . k_j over the
// visible keys (causal: j <= i), natural log, as cuDNN's SDPA writes with
// generate_stats and flash attention's backward reads. The CPU library and
// the interpreter compute it with this reference (FP64, the dot products in
// key order); their backward does not read it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_ATTENTIONSTATS_H
#define AMPC_RUNTIME_KERNELS_ATTENTIONSTATS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ampc::kernels::detail {

// lse [B, H, T] of query rows qRow(i, j, r) against key rows kRow(i, j, c)
// (batch i, query head j, c < S keys; causal: c <= r), each of d values.
template <typename QRow, typename KRow, typename Out>
void logSumExpRows(int64_t b, int64_t h, int64_t t, int64_t s, int64_t d,
                   double scale, bool causal, QRow qRow, KRow kRow, Out *lse) {
  std::vector<double> sc(static_cast<size_t>(s));
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t r = 0; r < t; ++r) {
        int64_t n = causal ? std::min(r + 1, s) : s;
        auto q = qRow(i, j, r);
        double m = -INFINITY, sum = 0;
        for (int64_t c = 0; c < n; ++c) {
          auto k = kRow(i, j, c);
          double dot = 0;
          for (int64_t l = 0; l < d; ++l)
            dot += double(q[l]) * double(k[l]);
          sc[size_t(c)] = dot * scale;
          m = std::max(m, sc[size_t(c)]);
        }
        for (int64_t c = 0; c < n; ++c)
          sum += std::exp(sc[size_t(c)] - m);
        lse[(i * h + j) * t + r] = Out(m + std::log(sum));
      }
}

// |qkv| [B, T, 3, H, D] as values of In (float or double), |lse| [B, H, T].
template <typename In, typename Out>
void packedLogSumExp(const In *qkv, int64_t b, int64_t t, int64_t h,
                     int64_t d, double scale, bool causal, Out *lse) {
  auto at = [&](int64_t p, int64_t i, int64_t j, int64_t s) {
    return qkv + (((i * t + s) * 3 + p) * h + j) * d;
  };
  logSumExpRows(
      b, h, t, t, d, scale, causal,
      [&](int64_t i, int64_t j, int64_t r) { return at(0, i, j, r); },
      [&](int64_t i, int64_t j, int64_t c) { return at(1, i, j, c); }, lse);
}

// scaled_dot_product_attention_stats: q [B, Hq, T, D], k [B, Hkv, S, D]
// (query head j reads kv head j / (Hq / Hkv)), |lse| [B, Hq, T].
template <typename In, typename Out>
void attentionLogSumExp(const In *q, const In *k, int64_t b, int64_t hq,
                        int64_t hkv, int64_t t, int64_t s, int64_t d,
                        double scale, bool causal, Out *lse) {
  int64_t group = hq / hkv;
  logSumExpRows(
      b, hq, t, s, d, scale, causal,
      [&](int64_t i, int64_t j, int64_t r) {
        return q + ((i * hq + j) * t + r) * d;
      },
      [&](int64_t i, int64_t j, int64_t c) {
        return k + ((i * hkv + j / group) * s + c) * d;
      },
      lse);
}

} // namespace ampc::kernels::detail

#endif
