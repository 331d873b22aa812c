//===- Linalg.cpp - matmul, batch_matmul, linear --------------------------===//
//
// Half inputs are widened to float buffers and multiplied by cblas_sgemm
// (FP32 accumulation); bias is added in float; the result rounds once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"

namespace ampc::cpu {

using namespace detail;

void matmulKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &) {
  constexpr std::string_view op = "graph.matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  if (a.rank != 2 || b.rank != 2 || c.rank != 2 || a.shape[1] != b.shape[0] ||
      c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1])
    fail(op, "expected [M, K] x [K, N] -> [M, N]");
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  FloatIn fa(a), fb(b);
  FloatOut fc(c);
  sgemm(false, false, m, n, k, 1.0f, fa.data(), k, fb.data(), n, 0.0f,
        fc.data(), n);
  fc.commit();
}

void batchMatmulKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.batch_matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  int r = a.rank;
  if (r < 3 || b.rank != r || c.rank != r)
    fail(op, "expected operands of equal rank >= 3");
  int64_t batch = 1;
  for (int d = 0; d < r - 2; ++d) {
    if (a.shape[d] != b.shape[d] || a.shape[d] != c.shape[d])
      fail(op, "batch dimensions differ");
    batch *= a.shape[d];
  }
  int64_t m = a.shape[r - 2], k = a.shape[r - 1], n = b.shape[r - 1];
  if (b.shape[r - 2] != k || c.shape[r - 2] != m || c.shape[r - 1] != n)
    fail(op, "expected [..., M, K] x [..., K, N] -> [..., M, N]");
  FloatIn fa(a), fb(b);
  FloatOut fc(c);
  for (int64_t i = 0; i < batch; ++i)
    sgemm(false, false, m, n, k, 1.0f, fa.data() + i * m * k, k,
          fb.data() + i * k * n, n, 0.0f, fc.data() + i * m * n, n);
  fc.commit();
}

// y = x W^T + b over the flattened leading dimensions of x.
void linearKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &) {
  constexpr std::string_view op = "graph.linear";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef *bias = optional(in, 2);
  const TensorRef &y = required(op, out, 0);
  if (x.rank < 1 || w.rank != 2 || x.shape[x.rank - 1] != w.shape[1])
    fail(op, "expected x [..., K] and weight [N, K]");
  int64_t k = w.shape[1], n = w.shape[0], m = x.numel() / (k ? k : 1);
  if (y.numel() != m * n || (bias && bias->numel() != n))
    fail(op, "result or bias shape mismatch");
  FloatIn fx(x), fw(w);
  FloatOut fy(y);
  sgemm(false, true, m, n, k, 1.0f, fx.data(), k, fw.data(), k, 0.0f,
        fy.data(), n);
  if (bias) {
    FloatIn fb(*bias);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        fy[i * n + j] += fb[j];
  }
  fy.commit();
}

} // namespace ampc::cpu
