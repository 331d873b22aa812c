//===- Common.h - Host-side helpers of the CUDA kernel library --*- C++ -*-===//
#ifndef AMPC_RUNTIME_CUDA_COMMON_H
#define AMPC_RUNTIME_CUDA_COMMON_H

#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/Geometry.h"

#include <string>
#include <string_view>

namespace ampc::cuda::detail {

// The operand checks shared with runtime/cpu (runtime/kernels/Geometry.h),
// so both libraries give the same error texts. fail throws std::invalid_argument("<op>: <msg>") (bad shapes
// are caller bugs; they are found on the warm-up step, before any capture).
using kernels::detail::broadcastStrides;
using kernels::detail::fail;
using kernels::detail::normAxis;
using kernels::detail::optional;
using kernels::detail::required;
using kernels::detail::strides;

// Grid size for a grid-stride loop over |n| elements.
int gridFor(int64_t n, int threads = 256);

// Aborts on a launch error (configuration errors show up here).
void checkLaunch(const char *op);

// Fails |op| with "|what| during stream capture (run one step before
// capturing)" when |stream| is being captured: what allocates (scratch
// growth, cuDNN plans and graphs) belongs to the warm-up step.
void failIfCapturing(cudaStream_t stream, std::string_view op,
                     const char *what);

// A shape passed to kernels by value.
struct Dims {
  int rank = 0;
  int64_t d[kMaxRank] = {};
};
Dims dimsOf(const TensorRef &t);

} // namespace ampc::cuda::detail

#endif
