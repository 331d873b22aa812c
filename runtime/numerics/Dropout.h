//===- Dropout.h - The dropout mask, one definition -------------*- C++ -*-===//
//
// Whether element i of the dropout op with attribute `key` is kept at
// training step `step` under run seed `seed`. A pure function of its
// arguments (Philox4x32-10), so the backward recomputes the forward mask and
// the interpreter, CPU and CUDA targets agree bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_DROPOUT_H
#define AMPC_RUNTIME_NUMERICS_DROPOUT_H

#include "runtime/numerics/Philox.h"

#include <cstdint>

namespace ampc::num {

// Counter {i lo, i hi, step lo 32 bits, key lo 32 bits}, Philox key = seed;
// kept when the first word's 24-bit uniform is >= p.
inline bool dropoutKeep(uint64_t seed, uint64_t step, uint64_t key, uint64_t i,
                        double p) {
  Philox4 r = philox4x32(
      {uint32_t(i), uint32_t(i >> 32), uint32_t(step), uint32_t(key)}, seed);
  return uniform01(r[0]) >= p;
}

} // namespace ampc::num

#endif
