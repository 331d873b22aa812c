//===- Gemm.h - Row-major GEMMs on cuBLASLt ----------------------*- C++ -*-===//
#ifndef AMPC_RUNTIME_CUDA_GEMM_H
#define AMPC_RUNTIME_CUDA_GEMM_H

#include "runtime/cuda/Kernels.h"

namespace ampc::cuda::detail {

// C[b] = alpha * op(A[b]) op(B[b]) (+ bias over C's columns) + beta * C[b],
// row-major, for b < batch. FP32 compute and accumulation (no TF32); the
// result rounds once to C's type.
struct Gemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr;
  DType aType = DType::F32;
  int64_t lda = 0;
  const void *b = nullptr;
  DType bType = DType::F32;
  int64_t ldb = 0;
  void *c = nullptr;
  DType cType = DType::F32;
  int64_t ldc = 0;
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
  const void *bias = nullptr; // [n], C's type
  float alpha = 1.0f, beta = 0.0f;
  // When set (batch 1, bias null): biasGrad[i] = sum over K of op(A)[i, :],
  // [m], C's type, written by the same call (cuBLASLt's BGRADB epilogue).
  void *biasGrad = nullptr;
};

// Enqueues |g| on |stream|. The algorithm is chosen by cuBLASLt's heuristic
// once per problem shape and cached, with the descriptors. Returns false,
// having enqueued nothing, only when |g| asks for biasGrad and cuBLASLt has
// no algorithm for that epilogue (the caller then runs the GEMM and the sum
// apart); any other problem without an algorithm is an error.
bool gemm(const Gemm &g, cudaStream_t stream, std::string_view op);

} // namespace ampc::cuda::detail

#endif
