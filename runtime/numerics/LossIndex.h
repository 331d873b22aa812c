//===- LossIndex.h - Scalar formulas of binary_cross_entropy_with_logits -*- C++ -*-===//
//
// One definition for the kernel libraries and the interpreter, as
// Elementwise.h (templates on the scalar type, host and device).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_LOSSINDEX_H
#define AMPC_RUNTIME_NUMERICS_LOSSINDEX_H

#include "runtime/numerics/Elementwise.h"

namespace ampc::num {

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), PyTorch's log_sigmoid.
template <class T> AMPC_HD inline T logSigmoid(T x) {
  return (x < T(0) ? x : T(0)) - math::log1p(math::exp(-math::fabs(x)));
}

// binary_cross_entropy_with_logits of one element, as PyTorch:
// (1 - t) x - lw log_sigmoid(x) with lw = (pw - 1) t + 1 (pw = 1 without
// a pos_weight, which makes lw exactly 1).
template <class T> AMPC_HD inline T bceWithLogits(T x, T t, T pw) {
  T lw = (pw - T(1)) * t + T(1);
  return (T(1) - t) * x - lw * logSigmoid(x);
}

} // namespace ampc::num

#endif
