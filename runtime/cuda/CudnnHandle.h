//===- CudnnHandle.h - The library's one cuDNN handle -----------*- C++ -*-===//
//
// conv2d (Cudnn.cpp) and flash attention (FlashAttention.cpp) share one
// cuDNN handle, so a process pays for one cuDNN context (a process drives
// one device: NcclCommunicator sets it once). It is created lazily, by the
// first plan or graph that needs it (the warm-up step, outside stream
// capture), and bound to the caller's stream with cudnnSetStream per call.
// One mutex guards the handle, both callers' plan caches and each
// cudnnSetStream + call pair, as the handle is a single stream binding.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDNNHANDLE_H
#define AMPC_RUNTIME_CUDA_CUDNNHANDLE_H

#if AMPC_HAVE_CUDNN
#include <cudnn.h>

#include <mutex>

namespace ampc::cuda::detail {

// Held around cudnnHandle(), the plan caches and every cudnnSetStream + call.
std::mutex &cudnnMutex();

// The handle (cudnnMutex() held); nullptr, after one warning, when cuDNN
// cannot be initialised here: conv2d then takes im2col + cuBLASLt and
// attention the math path.
cudnnHandle_t cudnnHandle();

} // namespace ampc::cuda::detail
#endif

#endif
