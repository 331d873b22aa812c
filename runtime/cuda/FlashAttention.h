//===- FlashAttention.h - Attention on cuDNN's fused flash SDPA -*- C++ -*-===//
//
// Attention.cu asks here first; false means "take the math path". The
// cuDNN frontend (header-only, heavy) is included by FlashAttention.cpp
// alone, compiled by the host compiler; without the frontend (or cuDNN) in
// the build, these always answer false.
//
// Which calls may take the flash path is runtime/kernels/AttentionPath.h
// (shared with the cost model). AMPC_CUDA_ATTENTION: unset, "" or "auto":
// flash where eligible and cuDNN supports it, else math; "math": always the
// math path; "flash": an ineligible or unsupported call is an error (tests).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_FLASHATTENTION_H
#define AMPC_RUNTIME_CUDA_FLASHATTENTION_H

#include "runtime/cuda/Kernels.h"

#include <string_view>

namespace ampc::cuda::detail {

enum class AttentionPath { Auto, Math, Flash };

// AMPC_CUDA_ATTENTION, read at each call (a misspelt value is an error).
AttentionPath attentionPath();

// True when the library was built with cuDNN and its frontend.
bool flashCompiled();

// o = softmax(scale q k^T, causal or not) v on cuDNN (q [.., Hq, T, D],
// k [.., Hkv, S, D], v [.., Hkv, S, E], o [.., Hq, T, E], contiguous; the
// geometry already checked; |masked|: the call has a mask tensor). False,
// with nothing enqueued, when the call is not eligible or cuDNN does not support it; with AMPC_CUDA_ATTENTION=flash
// that is an error instead. Graphs are built once per shape, dtype, scale
// and mask and cached; a new one outside stream capture only (the warm-up
// step), as scratch growth.
bool flashForward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                  const TensorRef &o, float scale, bool causal, bool masked,
                  cudaStream_t stream, std::string_view op);

// dq, dk, dv (each may be null) of flashForward for the cotangent g: the
// forward again with its softmax statistics (O and the FP32 log-sum-exp per
// row in scratch), then cuDNN's backward. False as flashForward.
bool flashBackward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                   const TensorRef &g, const TensorRef *dq,
                   const TensorRef *dk, const TensorRef *dv, float scale,
                   bool causal, bool masked, cudaStream_t stream,
                   std::string_view op);

// packed_attention on cuDNN with strided views, no copies: q, k, v (and
// dq, dk, dv) the thirds of qkv (dqkv) [B, T, 3, heads, D], o and g
// [B, T, heads, D] (cuDNN frontend's SDPA takes any strides; llm.c's
// layout). False as flashForward.
bool flashPackedForward(const TensorRef &qkv, const TensorRef &o,
                        int64_t heads, float scale, bool causal,
                        cudaStream_t stream, std::string_view op);
bool flashPackedBackward(const TensorRef &qkv, const TensorRef &g,
                         const TensorRef &dqkv, int64_t heads, float scale,
                         bool causal, cudaStream_t stream,
                         std::string_view op);

// packed_attention_stats and its backward (graph-save-attention-stats):
// the strided forward also writes the FP32 log-sum-exp of each query row
// into |stats| [B, heads, T]; the backward reads that and the forward's
// result |o| instead of running the forward again. The backward takes the
// flash path only where the forward must have (the same eligibility, the
// same cached forward-with-statistics plan usable, plus its own), so it
// never reads statistics the forward did not write. False as flashForward.
bool flashPackedForwardStats(const TensorRef &qkv, const TensorRef &o,
                             const TensorRef &stats, int64_t heads,
                             float scale, bool causal, cudaStream_t stream,
                             std::string_view op);
bool flashPackedBackwardSaved(const TensorRef &qkv, const TensorRef &o,
                              const TensorRef &stats, const TensorRef &g,
                              const TensorRef &dqkv, int64_t heads,
                              float scale, bool causal, cudaStream_t stream,
                              std::string_view op);

// scaled_dot_product_attention_stats and its backward: flashForward that
// also writes the statistics into |stats| [B, Hq, T], and the backward from
// the saved o and statistics (all of dq, dk, dv given). The same guarantee
// as the packed pair: the backward takes the flash path only where the
// forward must have. False as flashForward.
bool flashForwardStats(const TensorRef &q, const TensorRef &k,
                       const TensorRef &v, const TensorRef &o,
                       const TensorRef &stats, float scale, bool causal,
                       cudaStream_t stream, std::string_view op);
bool flashBackwardSaved(const TensorRef &q, const TensorRef &k,
                        const TensorRef &v, const TensorRef &o,
                        const TensorRef &stats, const TensorRef &g,
                        const TensorRef &dq, const TensorRef &dk,
                        const TensorRef &dv, float scale, bool causal,
                        cudaStream_t stream, std::string_view op);

} // namespace ampc::cuda::detail

#endif
