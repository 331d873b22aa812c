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
  MatmulShape s = matmulShape(op, a, b, c);
  int64_t m = s.m, k = s.k, n = s.n;
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
  auto [batch, m, k, n] = batchMatmulShape(op, a, b, c);
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
  MatmulShape s = linearShape(op, x, w, bias, y);
  int64_t m = s.m, k = s.k, n = s.n;
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
