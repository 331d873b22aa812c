//===- NormStats.h - Statistics the CPU normalisations share ----*- C++ -*-===//
//
// layer_norm, group_norm and batch_norm differ only in which elements form a
// group: a row, a (sample, group) run, or a channel across the batch. One
// two-pass mean / biased variance in float, summed in index order, serves
// all three (and keeps their results bitwise what they were), as does the
// input gradient they share.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_NORMSTATS_H
#define AMPC_RUNTIME_CPU_NORMSTATS_H

#include "runtime/cpu/Common.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ampc::cpu::detail {

struct MeanVar {
  float mean, var; // biased variance
};

// Over |rows| runs of |len| elements, |stride| apart, from |x|.
inline MeanVar meanVar(const float *x, int64_t rows, int64_t len,
                       int64_t stride) {
  float sum = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < len; ++k)
      sum += x[r * stride + k];
  float n = float(rows * len), mean = sum / n, var = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < len; ++k)
      var += (x[r * stride + k] - mean) * (x[r * stride + k] - mean);
  return {mean, var / n};
}

inline float rstdOf(MeanVar s, float eps) {
  return 1.0f / std::sqrt(s.var + eps);
}

// dx = rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)), given the two means.
inline float normInputGrad(float rstd, float gw, float xhat, float meanGw,
                           float meanGwXhat) {
  return rstd * (gw - meanGw - xhat * meanGwXhat);
}

// Writes the float gradients a backward kernel accumulated into the outputs
// it was given (any may be null).
inline void narrowGrads(const std::vector<float> &gdx, const TensorRef *dx,
                        const std::vector<float> &gdw, const TensorRef *dw,
                        const std::vector<float> *gdb = nullptr,
                        const TensorRef *db = nullptr) {
  if (dx)
    narrow(gdx.data(), *dx);
  if (dw)
    narrow(gdw.data(), *dw);
  if (db && gdb)
    narrow(gdb->data(), *db);
}

} // namespace ampc::cpu::detail

#endif // AMPC_RUNTIME_CPU_NORMSTATS_H
