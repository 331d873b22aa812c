//===- Common.h - Host-side helpers of the CUDA kernel library --*- C++ -*-===//
#ifndef AMPC_RUNTIME_CUDA_COMMON_H
#define AMPC_RUNTIME_CUDA_COMMON_H

#include "runtime/cpu/Geometry.h"
#include "runtime/cuda/Kernels.h"

#include <string>
#include <string_view>

namespace ampc::cuda::detail {

// The CPU library's operand checks (runtime/cpu/Geometry.h), with the same
// error texts. fail throws std::invalid_argument("<op>: <msg>") (bad shapes
// are caller bugs; they are found on the warm-up step, before any capture).
using cpu::detail::fail;
using cpu::detail::optional;
using cpu::detail::required;

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
