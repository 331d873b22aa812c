//===- CudnnHandle.cpp - The library's one cuDNN handle ------------------===//
#include "runtime/cuda/CudnnHandle.h"

#if AMPC_HAVE_CUDNN
#include <cstdio>

namespace ampc::cuda::detail {

std::mutex &cudnnMutex() {
  static std::mutex m;
  return m;
}

cudnnHandle_t cudnnHandle() {
  static cudnnHandle_t handle = nullptr;
  static bool failed = false;
  if (handle || failed)
    return handle;
  cudnnStatus_t s = cudnnCreate(&handle);
  if (s != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr,
                 "warning: cuDNN unavailable (%s): conv2d uses im2col + "
                 "cuBLASLt and attention the math path\n",
                 cudnnGetErrorString(s));
    handle = nullptr;
    failed = true;
  }
  return handle;
}

} // namespace ampc::cuda::detail
#endif
