//===- Dropout.h - The dropout mask, one definition for every target -*- C++ -*-===//
//
// The keep/drop decision of element i of a `graph.dropout` is a pure function
// of (seed, step, the op's `key`, i): the forward, the backward (which
// recomputes the mask), the interpreter and the generated code all call this.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_DROPOUT_H
#define AMPC_RUNTIME_NUMERICS_DROPOUT_H

#include "runtime/numerics/Philox.h"

#include <cstdint>

namespace ampc::num {

// The Philox key of one dropout op in one step: a Philox draw of
// (step, key) under the run seed. Loops hoist it out of the element loop.
AMPC_HD inline uint64_t dropoutStreamKey(uint64_t seed, uint64_t step, uint64_t key) {
  Philox4 r = philox4x32({uint32_t(step), uint32_t(step >> 32), uint32_t(key),
                          uint32_t(key >> 32)},
                         seed);
  return uint64_t(r[0]) | (uint64_t(r[1]) << 32);
}

// True if element |i| is kept. One Philox call serves four consecutive
// elements (word i % 4 of counter i / 4); u in [0, 1) with 24 bits, and the
// element is kept when u >= p, so P(keep) = 1 - p.
AMPC_HD inline bool dropoutKeep(uint64_t streamKey, uint64_t i, double p) {
  uint64_t block = i >> 2;
  Philox4 r = philox4x32({uint32_t(block), uint32_t(block >> 32), 0u, 0u},
                         streamKey);
  return uniform01(r[i & 3]) >= p;
}

AMPC_HD inline bool dropoutKeep(uint64_t seed, uint64_t step, uint64_t key, uint64_t i,
                        double p) {
  return dropoutKeep(dropoutStreamKey(seed, step, key), i, p);
}

} // namespace ampc::num

#endif
