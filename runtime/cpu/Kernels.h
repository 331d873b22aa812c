//===- Kernels.h - The CPU kernel library's ABI ------------------*- C++ -*-===//
//
// One generic entry point per graph op, looked up by op name; generated CPU
// code calls these for everything it does not print as a fused loop.
// Numerics (docs/ARCHITECTURE.md, "CPU kernel library"): inputs are widened
// to float, computed in float (sums, means, softmax and norm statistics
// accumulate in float), and each result is rounded once to its element type.
// GEMM-shaped ops widen half inputs and call cblas_sgemm (FP32 accumulation).
//
// TensorRef, Attrs, the operand conventions and the op list are shared with
// runtime/cuda (runtime/kernels/Abi.h); they are re-exported here under
// ampc::cpu, the names generated code uses.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_KERNELS_H
#define AMPC_RUNTIME_CPU_KERNELS_H

#include "runtime/kernels/Abi.h"

#include <span>
#include <string_view>

namespace ampc::cpu {

using kernels::Attr;
using kernels::Attrs;
using kernels::dtypeSize;
using kernels::kMaxRank;
using kernels::makeRef;
using kernels::registeredOps;
using kernels::TensorRef;
using rt::DType;

using Kernel = void (*)(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs);

// "graph.linear" (or "linear") -> its kernel; nullptr for unknown names.
Kernel lookup(std::string_view opName);

} // namespace ampc::cpu

#endif
