//===- Linalg.cpp - matmul, batch_matmul, linear and their fused forms ----===//
//
// GEMMs accumulate in FP32 under typed numerics (a float accumulator fed
// exact products of the widened inputs, one rounding per addition) and round
// the sum once to the result type: what cuBLAS does for half inputs.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "runtime/numerics/Elementwise.h"

using namespace ampc::interp;
namespace num = ampc::num;

namespace {

// C[b] = op(A[b]) (MxK) * op(B[b]) (KxN) for |batch| row-major matrices;
// op transposes A (stored KxM) when |ta|, B (stored NxK) when |tb|.
void gemm(const OpContext &ctx, const double *a, const double *b, double *c,
          int64_t batch, int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
  for (int64_t p = 0; p < batch; ++p) {
    const double *pa = a + p * m * k, *pb = b + p * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Accum acc(ctx);
        for (int64_t l = 0; l < k; ++l)
          acc.add((ta ? pa[l * m + i] : pa[i * k + l]) *
                  (tb ? pb[j * k + l] : pb[l * n + j]));
        c[(p * m + i) * n + j] = acc.get();
      }
  }
}

// matmul and batch_matmul (equal batch dimensions: graph-desugar made them
// so), with the lhs_transposed / rhs_transposed flags.
KernelResult matmul(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  const Shape &a = in[0].shape;
  int64_t r = in[0].rank();
  bool ta = ctx.getFlag("lhs_transposed"), tb = ctx.getFlag("rhs_transposed");
  int64_t batch = numElements(Shape(a.begin(), a.end() - 2));
  int64_t m = ta ? a[r - 1] : a[r - 2], k = ta ? a[r - 2] : a[r - 1];
  int64_t n = out.shape.back();
  gemm(ctx, in[0].f.data(), in[1].f.data(), out.f.data(), batch, m, k, n, ta,
       tb);
  return one(std::move(out));
}

// linear(x [..., K], w [N, K], b [N]?) = x w^T + b; the bias joins the
// accumulator (a GEMM epilogue), then one rounding.
void linearInto(const OpContext &ctx, std::span<const Tensor> in,
                Tensor &out) {
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
}

KernelResult linear(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  linearInto(ctx, in, out);
  return one(std::move(out));
}

// linear_gelu = (gelu_tanh(z), z) of the linear's unrounded z: the
// interpreter rounds each result once afterwards (cuBLASLt's GELU_AUX_BIAS).
KernelResult linearGelu(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor z = ctx.makeResult(1);
  linearInto(ctx, in, z);
  Tensor y = ctx.makeResult(0);
  for (int64_t i = 0; i < y.size(); ++i)
    y.f[i] = num::geluTanh(z.f[i]);
  return several(std::move(y), std::move(z));
}

// matmul_gelu_backward(lhs, rhs, z) = gelu_tanh'(z) times the unrounded
// GEMM, rounded once afterwards (cuBLASLt's DGELU).
KernelResult matmulGeluBackward(const OpContext &ctx,
                                std::span<const Tensor> in) {
  auto c = matmul(ctx, in.first(2));
  if (mlir::failed(c))
    return mlir::failure();
  Tensor g = std::move((*c)[0]);
  for (int64_t i = 0; i < g.size(); ++i)
    g.f[i] = num::geluTanhGrad(in[2].f[i], g.f[i]);
  return one(std::move(g));
}

// matmul_bias_grad(lhs, rhs) = matmul(lhs, rhs), and the lhs summed over K
// in its row-major order, one accumulator per output: bitwise the
// graph.reduce_sum it replaces.
KernelResult matmulBiasGrad(const OpContext &ctx, std::span<const Tensor> in) {
  auto c = matmul(ctx, in);
  if (mlir::failed(c))
    return mlir::failure();
  Tensor db = ctx.makeResult(1);
  const Tensor &a = in[0];
  bool ta = ctx.getFlag("lhs_transposed");
  int64_t m = db.size(), k = a.size() / std::max<int64_t>(m, 1);
  for (int64_t i = 0; i < m; ++i) {
    Accum acc(ctx);
    for (int64_t l = 0; l < k; ++l)
      acc.add(ta ? a.f[l * m + i] : a.f[i * k + l]);
    db.f[i] = acc.get();
  }
  return several(std::move((*c)[0]), std::move(db));
}

} // namespace

void ampc::interp::registerLinalgKernels(KernelTable &t) {
  t["graph.matmul"] = matmul;
  t["graph.batch_matmul"] = matmul;
  t["graph.linear"] = linear;
  t["graph.matmul_bias_grad"] = matmulBiasGrad;
  t["graph.linear_gelu"] = linearGelu;
  t["graph.matmul_gelu_backward"] = matmulGeluBackward;
}
