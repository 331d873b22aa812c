//===- NormStats.h - Statistics the normalisation kernels share -*- C++ -*-===//
//
// layer_norm, group_norm and batch_norm differ only in which elements form a
// group: a row, a (sample, group) run, or a channel across the batch. Mean
// and biased variance (as PyTorch normalises) in double, two pass.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_INTERP_KERNELS_NORMSTATS_H
#define AMPC_COMPILER_INTERP_KERNELS_NORMSTATS_H

#include <cmath>
#include <cstdint>

namespace ampc::interp {

struct NormStats {
  double mean, rstd;
};

// Over |rows| runs of |len| elements, |stride| apart, from |x|.
inline NormStats normStats(const double *x, int64_t rows, int64_t len,
                           int64_t stride, double eps) {
  double mean = 0, var = 0, n = double(rows * len);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < len; ++k)
      mean += x[r * stride + k];
  mean /= n;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < len; ++k) {
      double d = x[r * stride + k] - mean;
      var += d * d;
    }
  return {mean, 1.0 / std::sqrt(var / n + eps)};
}

} // namespace ampc::interp

#endif // AMPC_COMPILER_INTERP_KERNELS_NORMSTATS_H
