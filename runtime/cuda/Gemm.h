//===- Gemm.h - Row-major GEMMs on cuBLASLt ----------------------*- C++ -*-===//
#ifndef AMPC_RUNTIME_CUDA_GEMM_H
#define AMPC_RUNTIME_CUDA_GEMM_H

#include "runtime/cuda/Kernels.h"

namespace ampc::cuda::detail {

// The tanh GELU in the epilogue (cuBLASLt's GELU is the tanh form).
enum class Gelu {
  None,
  // aux = acc + bias, C = gelu(acc + bias): GELU_AUX_BIAS (GELU_AUX
  // without a bias), for graph.linear_gelu.
  Forward,
  // C = acc * gelu'(aux), aux read: DGELU, for graph.matmul_gelu_backward.
  Backward,
};

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
  // When not None (batch 1, biasGrad null; Backward: bias null too): aux is
  // row-major [m, n] of C's type with leading dimension ldAux, written
  // (Forward) or read (Backward) by the epilogue, each value rounded once.
  Gelu gelu = Gelu::None;
  void *aux = nullptr;
  int64_t ldAux = 0;
};

// Enqueues |g| on |stream|. The algorithm is chosen by cuBLASLt's heuristic
// once per problem shape and cached, with the descriptors. Returns false,
// having enqueued nothing, only when |g| asks for biasGrad or a GELU and
// cuBLASLt has no algorithm for that epilogue, the problem misses one of its
// documented constraints, or K is 0 (the caller then runs the GEMM and the
// sum or the GELU apart); any other problem without an algorithm is an
// error.
bool gemm(const Gemm &g, cudaStream_t stream, std::string_view op);

// cuBLASLt's name for the epilogue |g| asks for ("BGRADB", "GELU_AUX", ...),
// for messages.
const char *epilogueName(const Gemm &g);

} // namespace ampc::cuda::detail

#endif
