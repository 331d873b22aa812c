//===- AttentionPath.h - Which attention calls take the flash path -*- C++ -*-===//
//
// The one rule, shared by the CUDA library (runtime/cuda/Attention.cu) and
// the cost model (compiler/cost/CostModel.cpp), for when
// scaled_dot_product_attention and its backward may run on cuDNN's fused
// flash attention instead of the math path: half q, k, v (and results) of
// one type, head dims cuDNN's kernels take (multiples of 8, at most 128),
// no mask tensor (causal or none). dropout_p never reaches a kernel
// (graph-desugar rewrites it into the math graph). At run time cuDNN may
// still refuse a shape (check_support), and the call takes the math path;
// the cost model cannot see that.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_ATTENTIONPATH_H
#define AMPC_RUNTIME_KERNELS_ATTENTIONPATH_H

#include "runtime/Model.h"

#include <cstdint>
#include <initializer_list>

namespace ampc::kernels {

// |q|: q's element type; |others|: k, v and the results (o, or g and the
// present dq, dk, dv); |d|, |e|: q's and v's last dimensions.
inline bool flashAttentionEligible(rt::DType q,
                                   std::initializer_list<rt::DType> others,
                                   int64_t d, int64_t e, bool masked) {
  if (masked || (q != rt::DType::F16 && q != rt::DType::BF16))
    return false;
  for (rt::DType t : others)
    if (t != q)
      return false;
  auto headDim = [](int64_t n) { return n > 0 && n % 8 == 0 && n <= 128; };
  return headDim(d) && headDim(e);
}

} // namespace ampc::kernels

#endif
