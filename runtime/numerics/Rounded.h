//===- Rounded.h - Float operations rounded one at a time -------*- C++ -*-===//
//
// nvcc contracts a * b + c into one fused multiply-add where it sees fit,
// and decides per inlined copy: the device epilogue's packed and element
// loops inlined the same optimizer formula and rounded it differently (an
// fma on the other product), so the two paths disagreed in the last bit
// (a review, 2026-12-03). The host build does not contract
// (-ffp-contract=off). These round every operation on its own on both
// sides, so a formula shared through runtime/numerics gives the same bits
// wherever it is inlined, on the CPU and the GPU alike.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_ROUNDED_H
#define AMPC_RUNTIME_NUMERICS_ROUNDED_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

AMPC_HD inline float mulRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b); // never contracted
#else
  return a * b;
#endif
}

AMPC_HD inline float addRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

AMPC_HD inline float subRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

} // namespace ampc::num

#endif
