//===- Linalg.cpp - matmul, batch_matmul, linear --------------------------===//
//
// Each op is one cuBLASLt GEMM (Gemm.h): FP32 compute and accumulation, one
// rounding to the result type. runtime/cpu/Linalg.cpp is the same on
// OpenBLAS.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.h"
#include "runtime/cuda/Gemm.h"

namespace ampc::cuda {

using namespace detail;
using kernels::detail::batchMatmulShape;
using kernels::detail::linearShape;
using kernels::detail::MatmulShape;
using kernels::detail::matmulShape;

void matmulKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  MatmulShape s = matmulShape(op, a, b, c);
  Gemm g;
  g.m = s.m, g.k = s.k, g.n = s.n;
  g.a = a.data, g.aType = a.dtype, g.lda = g.k;
  g.b = b.data, g.bType = b.dtype, g.ldb = g.n;
  g.c = c.data, g.cType = c.dtype, g.ldc = g.n;
  gemm(g, stream, op);
}

void batchMatmulKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &,
                       cudaStream_t stream) {
  constexpr std::string_view op = "graph.batch_matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  MatmulShape s = batchMatmulShape(op, a, b, c);
  Gemm g;
  g.m = s.m, g.k = s.k, g.n = s.n;
  g.a = a.data, g.aType = a.dtype, g.lda = g.k, g.strideA = g.m * g.k;
  g.b = b.data, g.bType = b.dtype, g.ldb = g.n, g.strideB = g.k * g.n;
  g.c = c.data, g.cType = c.dtype, g.ldc = g.n, g.strideC = g.m * g.n;
  g.batch = s.batch;
  gemm(g, stream, op);
}

// y = x W^T + b over the flattened leading dimensions of x; the bias is
// cuBLASLt's epilogue (added in FP32 before the one rounding).
void linearKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.linear";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef *bias = optional(in, 2);
  const TensorRef &y = required(op, out, 0);
  MatmulShape s = linearShape(op, x, w, bias, y);
  Gemm g;
  g.m = s.m, g.k = s.k, g.n = s.n;
  if (bias && bias->dtype != y.dtype)
    fail(op, "the bias must have the result's type");
  g.transB = true;
  g.a = x.data, g.aType = x.dtype, g.lda = g.k;
  g.b = w.data, g.bType = w.dtype, g.ldb = g.k;
  g.c = y.data, g.cType = y.dtype, g.ldc = g.n;
  g.bias = bias ? bias->data : nullptr;
  gemm(g, stream, op);
}

} // namespace ampc::cuda
