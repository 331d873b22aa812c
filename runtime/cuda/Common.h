//===- Common.h - Host-side helpers of the CUDA kernel library --*- C++ -*-===//
#ifndef AMPC_RUNTIME_CUDA_COMMON_H
#define AMPC_RUNTIME_CUDA_COMMON_H

#include "runtime/cuda/Kernels.h"

#include <string>
#include <string_view>

namespace ampc::cuda::detail {

// Throws std::invalid_argument("<op>: <msg>") (bad shapes are caller bugs;
// they are found on the warm-up step, before any capture).
[[noreturn]] void fail(std::string_view op, const std::string &msg);

// Operand |i|; fails when absent or null.
const TensorRef &required(std::string_view op, std::span<const TensorRef> refs,
                          size_t i);
// Operand |i| or nullptr when absent or null.
inline const TensorRef *optional(std::span<const TensorRef> refs, size_t i) {
  return i < refs.size() && refs[i].data ? &refs[i] : nullptr;
}

// Grid size for a grid-stride loop over |n| elements.
int gridFor(int64_t n, int threads = 256);

// Normalises a possibly negative axis against |rank|.
int normAxis(std::string_view op, int64_t axis, int rank);

// Aborts on a launch error (configuration errors show up here).
void checkLaunch(const char *op);

// A shape passed to kernels by value.
struct Dims {
  int rank = 0;
  int64_t d[cpu::kMaxRank] = {};
};
Dims dimsOf(const TensorRef &t);

} // namespace ampc::cuda::detail

#endif
