//===- Linalg.cpp - matmul, batch_matmul, linear and their fusions --------===//
//
// Each op is one cuBLASLt GEMM (Gemm.h): FP32 compute and accumulation, one
// rounding to the result type; matmul_bias_grad, linear_gelu and
// matmul_gelu_backward put the sum or the GELU in its epilogue.
// runtime/cpu/Linalg.cpp is the same on OpenBLAS.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.h"
#include "runtime/cuda/Gemm.h"
#include "runtime/kernels/EnvSwitch.h"

namespace ampc::cuda {

// Shape.cu: the old path's transposed copy.
void transposeKernel(std::span<const TensorRef>, std::span<const TensorRef>,
                     const Attrs &, cudaStream_t);
// Reduce.cu: the separate bias-gradient path's column sums.
void reduceSumKernel(std::span<const TensorRef>, std::span<const TensorRef>,
                     const Attrs &, cudaStream_t);
// Elementwise.cu: the separate GELU paths.
void geluKernel(std::span<const TensorRef>, std::span<const TensorRef>,
                const Attrs &, cudaStream_t);
void geluBackwardKernel(std::span<const TensorRef>, std::span<const TensorRef>,
                        const Attrs &, cudaStream_t);

using namespace detail;
using kernels::detail::batchMatmulShape;
using kernels::detail::linearShape;
using kernels::detail::MatmulShape;
using kernels::detail::matmulShape;

// lhs_transposed / rhs_transposed become cuBLASLt's transA / transB, so the
// operand is read in place. AMPC_CUDA_GEMM_TRANSPOSE=copy takes the old path
// instead (a strided transpose copy of the operand, then an untransposed
// GEMM), to isolate a bug on the next GPU run.
static bool copyTransposed() {
  static const bool v = kernels::envIs("AMPC_CUDA_GEMM_TRANSPOSE", "copy");
  return v;
}

// The old path: each transposed operand is first copied transposed (the
// graph.transpose kernel, into library scratch), then an untransposed GEMM.
static void gemmViaCopy(Gemm g, cudaStream_t stream, std::string_view op) {
  auto bytes = [&](DType t, int64_t rows, int64_t cols) {
    return (size_t(g.batch * rows * cols) * dtypeSize(t) + 255) / 256 * 256;
  };
  size_t aBytes = g.transA ? bytes(g.aType, g.k, g.m) : 0;
  size_t bBytes = g.transB ? bytes(g.bType, g.n, g.k) : 0;
  char *s = static_cast<char *>(scratch(aBytes + bBytes, op, stream));
  // [batch, rows, cols] at |src| -> [batch, cols, rows] at |dst|.
  auto copyT = [&](const void *src, void *dst, DType t, int64_t rows,
                   int64_t cols) {
    TensorRef x, y;
    x.data = const_cast<void *>(src), y.data = dst;
    x.dtype = y.dtype = t;
    x.rank = y.rank = 3;
    x.shape[0] = y.shape[0] = g.batch;
    x.shape[1] = rows, x.shape[2] = cols;
    y.shape[1] = cols, y.shape[2] = rows;
    transposeKernel({&x, 1}, {&y, 1}, Attrs{{"perm", {0, 2, 1}}}, stream);
  };
  if (g.transA) {
    copyT(g.a, s, g.aType, g.k, g.m);
    g.a = s, g.transA = false, g.lda = g.k;
  }
  if (g.transB) {
    copyT(g.b, s + aBytes, g.bType, g.n, g.k);
    g.b = s + aBytes, g.transB = false, g.ldb = g.n;
  }
  gemm(g, stream, op);
}

static void runGemm(const Gemm &g, cudaStream_t stream, std::string_view op) {
  if ((g.transA || g.transB) && copyTransposed())
    gemmViaCopy(g, stream, op);
  else
    gemm(g, stream, op);
}

// graph.matmul_bias_grad (the BGRADB epilogue), linear_gelu and
// matmul_gelu_backward (GELU_AUX(_BIAS), DGELU) run as one cuBLASLt call.
// A switch per epilogue, AMPC_CUDA_GEMM_BGRAD and AMPC_CUDA_GEMM_GELU,
// selects: auto (unset), the epilogue, or where cuBLASLt has no algorithm
// for it (or the problem misses its constraints) the old path, the GEMM and
// then the library's reduce_sum or gelu kernel; separate, the old path
// always (to isolate a bug on the next GPU run, A/B timing); fused, the
// epilogue, a missing algorithm being an error (the GPU tests use it, so a
// silent fallback fails them). Read at each call (only the eager first step
// calls; a captured graph replays), so a test can compare the paths in one
// process.
enum class EpiloguePath { Auto, Separate, Fused };
static EpiloguePath epiloguePath(const char *var) {
  return EpiloguePath(kernels::envChoice(var, {"auto", "separate", "fused"}));
}

// A 2-D GEMM's: under AMPC_CUDA_GEMM_TRANSPOSE=copy the separate one (the
// copy path, runGemm's, has no epilogue). The switch is read either way, so
// a misspelt value is still an error.
static EpiloguePath matmulEpiloguePath(const char *var) {
  EpiloguePath path = epiloguePath(var);
  return copyTransposed() ? EpiloguePath::Separate : path;
}

// Runs |g|, which asks for a declinable epilogue (Gemm.h), unless |path| is
// Separate. False: the caller runs the separate path.
static bool runEpilogue(const Gemm &g, EpiloguePath path, const char *var,
                        cudaStream_t stream, std::string_view op) {
  if (path == EpiloguePath::Separate)
    return false;
  if (gemm(g, stream, op))
    return true;
  if (path == EpiloguePath::Fused)
    fail(op, std::string("cuBLASLt has no algorithm for the ") +
                 epilogueName(g) + " epilogue here (" + var + "=fused)");
  return false;
}

// C = op(A) op(B), row-major 2-D operands (graph.matmul and
// matmul_bias_grad).
static Gemm gemm2d(const TensorRef &a, const TensorRef &b, const TensorRef &c,
                   bool ta, bool tb, const MatmulShape &s) {
  Gemm g;
  g.m = s.m, g.k = s.k, g.n = s.n;
  g.transA = ta, g.transB = tb;
  g.a = a.data, g.aType = a.dtype, g.lda = ta ? g.m : g.k;
  g.b = b.data, g.bType = b.dtype, g.ldb = tb ? g.k : g.n;
  g.c = c.data, g.cType = c.dtype, g.ldc = g.n;
  return g;
}

// The 2-D GEMM of in[0] and in[1] into |c| with the op's transpose flags
// (matmul_bias_grad, matmul_gelu_backward).
static Gemm flaggedGemm2d(std::string_view op, std::span<const TensorRef> in,
                          const TensorRef &c, const Attrs &attrs) {
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  bool ta = attrs.getBool("lhs_transposed"), tb = attrs.getBool("rhs_transposed");
  if (a.rank != 2 || b.rank != 2)
    fail(op, "the operands must be 2-D");
  return gemm2d(a, b, c, ta, tb, matmulShape(op, a, b, c, ta, tb));
}

void matmulKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  bool ta = attrs.getBool("lhs_transposed"), tb = attrs.getBool("rhs_transposed");
  runGemm(gemm2d(a, b, c, ta, tb, matmulShape(op, a, b, c, ta, tb)), stream,
          op);
}

void batchMatmulKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &attrs,
                       cudaStream_t stream) {
  constexpr std::string_view op = "graph.batch_matmul";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &c = required(op, out, 0);
  bool ta = attrs.getBool("lhs_transposed"), tb = attrs.getBool("rhs_transposed");
  MatmulShape s = batchMatmulShape(op, a, b, c, ta, tb);
  Gemm g;
  g.m = s.m, g.k = s.k, g.n = s.n;
  g.transA = ta, g.transB = tb;
  g.a = a.data, g.aType = a.dtype, g.lda = ta ? g.m : g.k, g.strideA = g.m * g.k;
  g.b = b.data, g.bType = b.dtype, g.ldb = tb ? g.k : g.n, g.strideB = g.k * g.n;
  g.c = c.data, g.cType = c.dtype, g.ldc = g.n, g.strideC = g.m * g.n;
  g.batch = s.batch;
  runGemm(g, stream, op);
}

// in: lhs, rhs (2-D); out: C = op(lhs) op(rhs), bias_grad = op(lhs) summed
// over K (the bias gradient when lhs is dY^T).
void matmulBiasGradKernel(std::span<const TensorRef> in,
                          std::span<const TensorRef> out, const Attrs &attrs,
                          cudaStream_t stream) {
  constexpr std::string_view op = "graph.matmul_bias_grad";
  const TensorRef &a = required(op, in, 0), &c = required(op, out, 0);
  const TensorRef &db = required(op, out, 1);
  Gemm g = flaggedGemm2d(op, in, c, attrs);
  bool ta = g.transA;
  if (db.rank != 1 || db.shape[0] != g.m || db.dtype != c.dtype)
    fail(op, "bias_grad must be [M] of the result's type");
  constexpr const char *var = "AMPC_CUDA_GEMM_BGRAD";
  g.biasGrad = db.data;
  if (runEpilogue(g, matmulEpiloguePath(var), var, stream, op))
    return;
  g.biasGrad = nullptr;
  runGemm(g, stream, op);
  reduceSumKernel({&a, 1}, {&db, 1},
                  Attrs{{"axes", std::vector<int64_t>{ta ? 0 : 1}}}, stream);
}

// y = x W^T + b over the flattened leading dimensions of x; the bias is
// cuBLASLt's epilogue (added in FP32 before the one rounding).
static Gemm linearGemm(std::string_view op, std::span<const TensorRef> in,
                       const TensorRef &y) {
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef *bias = optional(in, 2);
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
  return g;
}

void linearKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.linear";
  gemm(linearGemm(op, in, required(op, out, 0)), stream, op);
}

// The GELU ops' separate paths: the GEMM, then the library's gelu or
// gelu_backward kernel, tanh like cuBLASLt's epilogue. They round the GEMM's
// result to the type before the GELU (twice in all, as PyTorch eager does),
// the epilogue rounds once, so for f16/bf16 the paths can differ in the last
// bit.
static constexpr const char *kGeluVar = "AMPC_CUDA_GEMM_GELU";
static const Attrs &tanhGelu() {
  static const Attrs attrs{{"approximate", "tanh"}};
  return attrs;
}

// in: input [..., K], weight [N, K], optional bias [N]; out: result =
// gelu_tanh(z), preactivation = z = x W^T + b (bitwise graph.linear's).
void linearGeluKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &,
                      cudaStream_t stream) {
  constexpr std::string_view op = "graph.linear_gelu";
  const TensorRef &y = required(op, out, 0), &z = required(op, out, 1);
  if (z.dtype != y.dtype || z.numel() != y.numel())
    fail(op, "result and preactivation must match");
  Gemm g = linearGemm(op, in, y);
  g.gelu = Gelu::Forward, g.aux = z.data, g.ldAux = g.n;
  if (runEpilogue(g, epiloguePath(kGeluVar), kGeluVar, stream, op))
    return;
  // graph.linear into the preactivation, then graph.gelu of it.
  g.gelu = Gelu::None, g.aux = nullptr, g.ldAux = 0, g.c = z.data;
  gemm(g, stream, op);
  geluKernel({&z, 1}, {&y, 1}, tanhGelu(), stream);
}

// in: lhs, rhs (2-D), preactivation [M, N]; out: result = op(lhs) op(rhs)
// times gelu_tanh'(preactivation).
void matmulGeluBackwardKernel(std::span<const TensorRef> in,
                              std::span<const TensorRef> out,
                              const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.matmul_gelu_backward";
  const TensorRef &z = required(op, in, 2), &c = required(op, out, 0);
  Gemm g = flaggedGemm2d(op, in, c, attrs);
  if (z.numel() != c.numel() || z.dtype != c.dtype)
    fail(op, "the preactivation must be [M, N] of the result's type");
  g.gelu = Gelu::Backward, g.aux = z.data, g.ldAux = g.n;
  if (runEpilogue(g, matmulEpiloguePath(kGeluVar), kGeluVar, stream, op))
    return;
  // graph.matmul into the result, then graph.gelu_backward(z, result) over
  // it: in place is safe, the map kernel's thread for element i reads
  // element i of each operand before it writes element i of the result.
  g.gelu = Gelu::None, g.aux = nullptr, g.ldAux = 0;
  runGemm(g, stream, op);
  const TensorRef operands[2] = {z, c};
  geluBackwardKernel(operands, {&c, 1}, tanhGelu(), stream);
}

} // namespace ampc::cuda
