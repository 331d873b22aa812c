//===- Common.cpp - Errors, launch sizes, scratch memory -------------------===//
#include "runtime/cuda/Common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ampc::cuda {

void check(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return;
  std::fprintf(stderr, "error: CUDA: %s: %s\n", what, cudaGetErrorString(err));
  std::exit(1);
}

bool deviceAvailable() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

void *scratch(size_t bytes, std::string_view op, cudaStream_t stream) {
  static void *buffer = nullptr;
  static size_t capacity = 0;
  if (bytes <= capacity)
    return buffer;
  detail::failIfCapturing(stream, op, "scratch memory cannot grow");
  // The old buffer is kept, not freed: a CUDA graph captured before this
  // growth (a training step, before an evaluation that needs more) still
  // replays into it. Growth is rare (warm-up steps), so little is kept.
  size_t want = std::max(bytes, size_t(1) << 20);
  check(cudaMalloc(&buffer, want), "cudaMalloc(scratch)");
  capacity = want;
  return buffer;
}

namespace detail {

int gridFor(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  // Enough blocks to fill any GPU; the loops are grid-stride.
  return int(std::clamp<int64_t>(blocks, 1, 65536));
}

void checkLaunch(const char *op) { check(cudaGetLastError(), op); }

void failIfCapturing(cudaStream_t stream, std::string_view op,
                     const char *what) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone)
    fail(op, std::string(what) +
                 " during stream capture (run one step before capturing)");
}

Dims dimsOf(const TensorRef &t) {
  Dims d;
  d.rank = t.rank;
  for (int i = 0; i < t.rank; ++i)
    d.d[i] = t.shape[i];
  return d;
}

} // namespace detail
} // namespace ampc::cuda
