//===- Kernels.h - The CUDA kernel library's ABI -----------------*- C++ -*-===//
//
// The CUDA twin of runtime/cpu/Kernels.h: one generic entry point per graph
// op, looked up by op name, called by generated CUDA code for everything it
// does not print as a fused kernel. The same TensorRef and Attrs, operand
// conventions and op list (runtime/kernels/Abi.h; the data pointers are
// device pointers), re-exported under ampc::cuda; each call
// only enqueues work on |stream|: no host synchronisation, no allocation
// once warmed up, so a whole step can be captured in a CUDA graph.
//
// Numerics: FP32 math on half inputs (softmax, norms, losses, reductions
// accumulate in float), each result rounded once to its element type;
// GEMMs are cuBLASLt with FP32 compute/accumulation (CUBLAS_COMPUTE_32F,
// no TF32) and the bias added in the epilogue. conv2d and its backward ops
// run on cuDNN when built with it (FP32 compute type, no TF32 for f32
// tensors, deterministic algorithms), else or where cuDNN declines on
// im2col + cuBLASLt; AMPC_CUDA_CONV=im2col forces the latter.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_H
#define AMPC_RUNTIME_CUDA_KERNELS_H

#include "runtime/kernels/Abi.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string_view>

namespace ampc::cuda {

using kernels::Attr;
using kernels::Attrs;
using kernels::dtypeSize;
using kernels::kMaxRank;
using kernels::makeRef;
using kernels::registeredOps;
using kernels::TensorRef;
using rt::DType;

using Kernel = void (*)(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs,
                        cudaStream_t stream);

// "graph.linear" (or "linear") -> its kernel; nullptr for unknown names.
Kernel lookup(std::string_view opName);

// Creates the cuBLASLt handle and the GEMM workspace (outside any capture).
// Kernels call it themselves; calling it first keeps allocation out of the
// first step. The cuDNN handle is made by the first conv2d call (outside
// capture), so models without convolutions never load cuDNN.
void initialize();

// Library scratch memory of at least |bytes| (im2col columns, attention
// scores, cuDNN workspaces). Stream-ordered: valid until the next kernel of the library on the
// same stream. Grows only outside stream capture (the warm-up step); asking
// for more while capturing is an error naming the op.
void *scratch(size_t bytes, std::string_view op, cudaStream_t stream);

// True when a CUDA device is present and usable.
bool deviceAvailable();

// Aborts with |what| and the CUDA error string when |err| is an error.
void check(cudaError_t err, const char *what);

} // namespace ampc::cuda

#endif
