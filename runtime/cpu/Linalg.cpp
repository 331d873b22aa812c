//===- Linalg.cpp - matmul, batch_matmul, linear and their fused forms ----===//
//
// Half inputs are widened to float buffers and multiplied by cblas_sgemm
// (FP32 accumulation); bias is added in float; the result rounds once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/kernels/EnvSwitch.h"
#include "runtime/numerics/Elementwise.h"

#include <string_view>
#include <vector>

namespace ampc::cpu {

using namespace detail;

// lhs_transposed / rhs_transposed are cblas' transpose flags: the operand
// is read in place, never copied transposed. AMPC_CPU_GEMM_TRANSPOSE=copy
// copies it transposed first and runs the untransposed GEMM (what the
// compiler emitted before the flags), to tell OpenBLAS's summation order
// apart from a real difference.
static bool copyTransposed() {
  static const bool v = kernels::envIs("AMPC_CPU_GEMM_TRANSPOSE", "copy");
  return v;
}

// C[z] = op(A[z]) op(B[z]) over |batch| row-major matrices.
static void batchedGemm(const float *a, const float *b, float *c,
                        const MatmulShape &s, bool ta, bool tb) {
  int64_t m = s.m, k = s.k, n = s.n;
  std::vector<float> at, bt;
  if (copyTransposed() && (ta || tb)) {
    // [batch, rows, cols] -> [batch, cols, rows].
    auto transpose = [&](const float *x, std::vector<float> &y, int64_t rows,
                         int64_t cols) {
      y.resize(size_t(s.batch * rows * cols));
      for (int64_t z = 0; z < s.batch; ++z)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            y[size_t((z * cols + j) * rows + i)] = x[(z * rows + i) * cols + j];
    };
    if (ta)
      transpose(a, at, k, m), a = at.data(), ta = false;
    if (tb)
      transpose(b, bt, n, k), b = bt.data(), tb = false;
  }
  for (int64_t z = 0; z < s.batch; ++z)
    sgemm(ta, tb, m, n, k, 1.0f, a + z * m * k, ta ? m : k, b + z * k * n,
          tb ? k : n, 0.0f, c + z * m * n, n);
}

// C = op(lhs) op(rhs) of in[0], in[1] with the op's transpose flags, in
// float into |fc| (graph.matmul's result before its one rounding).
static void matmulFloat(std::string_view op, std::span<const TensorRef> in,
                        const TensorRef &c, const Attrs &attrs, FloatOut &fc) {
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  bool ta = attrs.getBool("lhs_transposed"), tb = attrs.getBool("rhs_transposed");
  MatmulShape s = matmulShape(op, a, b, c, ta, tb);
  FloatIn fa(a), fb(b);
  batchedGemm(fa.data(), fb.data(), fc.data(), s, ta, tb);
}

void matmulKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs) {
  constexpr std::string_view op = "graph.matmul";
  const TensorRef &c = required(op, out, 0);
  FloatOut fc(c);
  matmulFloat(op, in, c, attrs, fc);
  fc.commit();
}

void batchMatmulKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.batch_matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  bool ta = attrs.getBool("lhs_transposed"), tb = attrs.getBool("rhs_transposed");
  MatmulShape s = batchMatmulShape(op, a, b, c, ta, tb);
  FloatIn fa(a), fb(b);
  FloatOut fc(c);
  batchedGemm(fa.data(), fb.data(), fc.data(), s, ta, tb);
  fc.commit();
}

// z = x W^T + b in float over the flattened leading dimensions of x, into
// |fz| (the linear's FP32 result before its one rounding).
static void linearFloat(std::string_view op, std::span<const TensorRef> in,
                        const TensorRef &y, FloatOut &fz) {
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef *bias = optional(in, 2);
  MatmulShape s = linearShape(op, x, w, bias, y);
  int64_t m = s.m, k = s.k, n = s.n;
  FloatIn fx(x), fw(w);
  sgemm(false, true, m, n, k, 1.0f, fx.data(), k, fw.data(), k, 0.0f,
        fz.data(), n);
  if (bias) {
    FloatIn fb(*bias);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        fz[i * n + j] += fb[j];
  }
}

// y = x W^T + b over the flattened leading dimensions of x.
void linearKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &) {
  constexpr std::string_view op = "graph.linear";
  const TensorRef &y = required(op, out, 0);
  FloatOut fy(y);
  linearFloat(op, in, y, fy);
  fy.commit();
}

// cuBLASLt's GELU_AUX_BIAS epilogue: the GELU of the FP32 z, rounded once;
// z itself rounded is the preactivation (bitwise graph.linear's result).
void linearGeluKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.linear_gelu";
  const TensorRef &y = required(op, out, 0), &pre = required(op, out, 1);
  if (y.dtype != pre.dtype || y.numel() != pre.numel())
    fail(op, "result and preactivation must match");
  FloatOut fz(pre), fy(y);
  linearFloat(op, in, pre, fz);
  for (int64_t i = 0, n = y.numel(); i < n; ++i)
    fy[i] = num::geluTanh(fz[i]);
  fy.commit();
  fz.commit();
}

// cuBLASLt's DGELU epilogue: gelu'(preactivation) times the GEMM's FP32
// result, rounded once (matmul then gelu_backward round the GEMM first).
void matmulGeluBackwardKernel(std::span<const TensorRef> in,
                              std::span<const TensorRef> out,
                              const Attrs &attrs) {
  constexpr std::string_view op = "graph.matmul_gelu_backward";
  const TensorRef &pre = required(op, in, 2), &c = required(op, out, 0);
  if (required(op, in, 0).rank != 2 || required(op, in, 1).rank != 2)
    fail(op, "the operands must be 2-D");
  if (pre.numel() != c.numel())
    fail(op, "the preactivation must be [M, N]");
  FloatIn fp(pre);
  FloatOut fc(c);
  matmulFloat(op, in, c, attrs, fc);
  for (int64_t i = 0, n = c.numel(); i < n; ++i)
    fc[i] = num::geluTanhGrad(fp[i], fc[i]);
  fc.commit();
}

void reduceSumKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs);

// The GEMM and the reduce_sum of the lhs over K it fuses (cuBLASLt's BGRADB
// epilogue on the GPU): here the two library calls they replace, so the
// results are bitwise those of graph.matmul and graph.reduce_sum.
void matmulBiasGradKernel(std::span<const TensorRef> in,
                          std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.matmul_bias_grad";
  const TensorRef &a = required(op, in, 0);
  const TensorRef &db = required(op, out, 1);
  if (a.rank != 2)
    fail(op, "the lhs must be 2-D");
  matmulKernel(in, out.first(1), attrs);
  int64_t k = attrs.getBool("lhs_transposed") ? 0 : 1;
  reduceSumKernel({&a, 1}, {&db, 1}, Attrs{{"axes", std::vector<int64_t>{k}}});
}

} // namespace ampc::cpu
