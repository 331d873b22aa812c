//===- Linalg.cpp - matmul, batch_matmul, linear ---------------------------===//
//
// GEMMs accumulate in FP32 under typed numerics (a float accumulator fed
// exact products of the widened inputs, one rounding per addition) and round
// the sum once to the result type: what cuBLAS does for half inputs.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"

using namespace ampc::interp;

namespace {

// C[b] = A[b] (MxK) * B[b] (KxN) for |batch| row-major matrices.
void gemm(const OpContext &ctx, const double *a, const double *b, double *c,
          int64_t batch, int64_t m, int64_t k, int64_t n) {
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Accum acc(ctx);
        for (int64_t l = 0; l < k; ++l)
          acc.add(a[(p * m + i) * k + l] * b[(p * k + l) * n + j]);
        c[(p * m + i) * n + j] = acc.get();
      }
}

KernelResult matmul(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  const Shape &a = in[0].shape, &b = in[1].shape;
  int64_t r = in[0].rank();
  int64_t batch = numElements(Shape(a.begin(), a.end() - 2));
  gemm(ctx, in[0].f.data(), in[1].f.data(), out.f.data(), batch, a[r - 2],
       a[r - 1], b[r - 1]);
  return one(std::move(out));
}

// linear(x [..., K], w [N, K], b [N]?) = x w^T + b; the bias joins the
// accumulator (a GEMM epilogue), then one rounding.
KernelResult linear(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  const Tensor &x = in[0], &w = in[1];
  int64_t kdim = x.shape.back(), n = w.shape[0];
  int64_t rows = x.size() / kdim;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      Accum acc(ctx);
      for (int64_t l = 0; l < kdim; ++l)
        acc.add(x.f[i * kdim + l] * w.f[j * kdim + l]);
      if (in.size() > 2)
        acc.add(in[2].f[j]);
      out.f[i * n + j] = acc.get();
    }
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerLinalgKernels(KernelTable &t) {
  t["graph.matmul"] = matmul;
  t["graph.batch_matmul"] = matmul;
  t["graph.linear"] = linear;
}
