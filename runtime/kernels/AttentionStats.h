//===- AttentionStats.h - The softmax statistics attention saves -*- C++ -*-===//
//
// graph.packed_attention_stats returns, beside the attention's result, the
// log-sum-exp of each query row's scaled scores, lse [B, H, T] in f32:
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

// |qkv| [B, T, 3, H, D] as values of In (float or double), |lse| [B, H, T].
template <typename In, typename Out>
void packedLogSumExp(const In *qkv, int64_t b, int64_t t, int64_t h,
                     int64_t d, double scale, bool causal, Out *lse) {
  auto at = [&](int64_t p, int64_t i, int64_t j, int64_t s) {
    return (((i * t + s) * 3 + p) * h + j) * d;
  };
  std::vector<double> s(static_cast<size_t>(t));
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t r = 0; r < t; ++r) {
        int64_t n = causal ? r + 1 : t;
        const In *q = qkv + at(0, i, j, r);
        double m = -INFINITY, sum = 0;
        for (int64_t c = 0; c < n; ++c) {
          const In *k = qkv + at(1, i, j, c);
          double dot = 0;
          for (int64_t l = 0; l < d; ++l)
            dot += double(q[l]) * double(k[l]);
          s[size_t(c)] = dot * scale;
          m = std::max(m, s[size_t(c)]);
        }
        for (int64_t c = 0; c < n; ++c)
          sum += std::exp(s[size_t(c)] - m);
        lse[(i * h + j) * t + r] = Out(m + std::log(sum));
      }
}

} // namespace ampc::kernels::detail

#endif
