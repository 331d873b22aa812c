//===- Cudnn.h - conv2d passes on cuDNN (legacy convolution API) -*- C++ -*-===//
//
// Conv.cu asks for a plan per call; a null plan means "use im2col" (the
// build has no cuDNN, AMPC_CUDA_CONV=im2col, or cuDNN does not support the
// configuration). Plans are made once per geometry and dtype (descriptors,
// the heuristic's algorithm, its workspace size) and cached, so a repeated
// call does a map lookup, cudnnSetStream and the convolution call.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDNN_H
#define AMPC_RUNTIME_CUDA_CUDNN_H

#include "runtime/kernels/Geometry.h"
#include "runtime/cuda/Kernels.h"

#include <string_view>

namespace ampc::cuda::detail {

// The three passes, in the forward op's names: x [N,C,H,W], w [O,C/g,KH,KW]
// (cuDNN's KCRS filter), y [N,O,OH,OW].
//   Forward:        y  = conv(x, w) + beta * y
//   BackwardData:   x  = conv_transpose(y, w)       (y holds dL/dy)
//   BackwardFilter: w  = sum_n corr(x_n, y_n)       (y holds dL/dy)
enum class ConvPass { Forward, BackwardData, BackwardFilter };

struct ConvPlan; // opaque; owned by the cache, never freed

// The cached plan for |pass| on geometry |g| with x, w, y of types |tx|,
// |tw|, |ty|, or nullptr when the call should take the im2col path: cuDNN
// is used only for f32, f16 and bf16 with all three types equal. A new plan
// (the first may also create the cuDNN handle flash attention shares,
// CudnnHandle.h) is made only outside stream capture on |stream| (the
// warm-up step); during capture it is an error, as scratch growth is.
ConvPlan *convPlan(ConvPass pass, const kernels::detail::ConvShape &g, DType tx,
                   DType tw, DType ty, cudaStream_t stream,
                   std::string_view op);

// Enqueues |p| on |stream| (workspace from scratch()). The pass writes x,
// w or y (see ConvPass); beta (0 or 1) blends with the prior output in FP32
// before the one rounding. False when cuDNN refuses the call as not
// supported: nothing was enqueued, the plan is marked so later calls get no
// plan, and the caller takes the im2col path. Other cuDNN errors abort.
bool convRun(ConvPlan &p, void *x, void *w, void *y, float beta,
             cudaStream_t stream, std::string_view op);

} // namespace ampc::cuda::detail

#endif
