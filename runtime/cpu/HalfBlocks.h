//===- HalfBlocks.h - binary16 <-> float over arrays ------------*- C++ -*-===//
//
// GCC 12 keeps every _Float16 conversion scalar, and a loop with one does
// not vectorize. These convert whole arrays, 8 at a time with F16C where
// the kernels were built with it (vcvtph2ps is exact, vcvtps2ph rounds to
// nearest even: the scalar conversions' values). widen/narrow use them,
// and so do the generated CPU code's binary16 loops, which run in blocks
// (compiler/targets/cpu/CpuEmitBlock.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_HALFBLOCKS_H
#define AMPC_RUNTIME_CPU_HALFBLOCKS_H

#include "runtime/numerics/Half.h"

#include <cstdint>

namespace ampc::cpu {

// dst[k] = float(p[k]) for k < n.
void halfToFloat(const num::half *p, float *dst, int64_t n);
// p[k] = half(src[k]) for k < n.
void floatToHalf(const float *src, num::half *p, int64_t n);
// x[k] = float(half(x[k])) for k < n: an op's result rounded to binary16.
void roundThroughHalf(float *x, int64_t n);

} // namespace ampc::cpu

#endif
