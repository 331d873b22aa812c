//===- DeviceModelKernels.cu - The tiny kernels of DeviceModel ------------===//
//
// What DeviceModel enqueues besides the generated bodies and the epilogue:
// gradient accumulation over micro-batches (half gradients widened), the
// dropout step counter and the loss accumulator, each captured into the
// forward+backward graph; and
// the recast of the half weight copies after the masters were uploaded
// (eager, outside any graph).
//
//===----------------------------------------------------------------------===//
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ampc::cuda::detail {

namespace {

// Micro-batches after the first add their gradients.
__global__ void accumulate(float *g, const float *x, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    g[i] += x[i];
}

// The dropout step counter moves on by one micro-batch (inside the graph).
__global__ void advance(int64_t *counter) { *counter += 1; }

// The loss of one micro-batch joins the device-side accumulator.
template <typename T> __global__ void addLoss(float *acc, const T *loss) {
  *acc += float(*loss);
}

// A half weight copy from its master: round to nearest even, as graph.cast
// and the epilogue's store.
template <typename T>
__global__ void castToHalf(const float *w, T *h, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    h[i] = T(w[i]);
}

// A half gradient widened into the FP32 one (micro-batch 0) or added to it:
// exact, as the graph.cast it replaces (passes/TrainHalfGrads.cpp).
template <typename T>
__global__ void widenGrad(float *g, const T *h, int64_t n, bool add) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    g[i] = add ? g[i] + float(h[i]) : float(h[i]);
}

} // namespace

void launchAccumulate(float *g, const float *x, int64_t n, int grid,
                      cudaStream_t stream) {
  accumulate<<<grid, 256, 0, stream>>>(g, x, n);
}

void launchAdvance(int64_t *counter, cudaStream_t stream) {
  advance<<<1, 1, 0, stream>>>(counter);
}

void launchAddLoss(float *acc, const float *loss, cudaStream_t stream) {
  addLoss<<<1, 1, 0, stream>>>(acc, loss);
}
void launchAddLoss(float *acc, const __half *loss, cudaStream_t stream) {
  addLoss<<<1, 1, 0, stream>>>(acc, loss);
}
void launchAddLoss(float *acc, const __nv_bfloat16 *loss, cudaStream_t stream) {
  addLoss<<<1, 1, 0, stream>>>(acc, loss);
}

void launchCastToHalf(const float *w, void *h, int64_t n, bool bf16, int grid,
                      cudaStream_t stream) {
  if (bf16)
    castToHalf<<<grid, 256, 0, stream>>>(w, static_cast<__nv_bfloat16 *>(h),
                                         n);
  else
    castToHalf<<<grid, 256, 0, stream>>>(w, static_cast<__half *>(h), n);
}

void launchWidenGrad(float *g, const void *h, int64_t n, bool bf16, bool add,
                     int grid, cudaStream_t stream) {
  if (bf16)
    widenGrad<<<grid, 256, 0, stream>>>(
        g, static_cast<const __nv_bfloat16 *>(h), n, add);
  else
    widenGrad<<<grid, 256, 0, stream>>>(g, static_cast<const __half *>(h), n,
                                        add);
}

} // namespace ampc::cuda::detail
