//===- Philox.h - Counter-based random numbers ------------------*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., SC'11): the same (key, counter) gives the
// same numbers on every target and thread, so initialization and dropout
// masks are reproducible and need no RNG state.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_PHILOX_H
#define AMPC_RUNTIME_NUMERICS_PHILOX_H

#include "runtime/numerics/HostDevice.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace ampc::num {

using Philox4 = std::array<uint32_t, 4>;

// Ten rounds of Philox4x32 on |counter| with the 64-bit |key|.
AMPC_HD inline Philox4 philox4x32(Philox4 ctr, uint64_t key) {
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ k0, uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ k1, uint32_t(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

// Maps 32 random bits to a float in [0, 1) with 24 bits of precision.
AMPC_HD inline double uniform01(uint32_t bits) { return double(bits >> 8) * 0x1p-24; }

// Maps 32 random bits to (0, 1]: safe for log().
inline double uniformOpen0(uint32_t bits) {
  return (double(bits >> 8) + 1.0) * 0x1p-24;
}

// A standard normal from two words (Box-Muller, cosine branch).
inline double standardNormal(uint32_t a, uint32_t b) {
  constexpr double kTwoPi = 6.283185307179586;
  return std::sqrt(-2.0 * std::log(uniformOpen0(a))) *
         std::cos(kTwoPi * uniform01(b));
}

// FNV-1a: a stable 64-bit stream id for a name (a parameter, an op).
inline uint64_t streamId(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

} // namespace ampc::num

#endif
