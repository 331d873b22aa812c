//===- Common.cpp - Shared helpers of the CPU kernels ---------------------===//
#include "runtime/cpu/Common.h"

#include "runtime/cpu/HalfBlocks.h"
#include "runtime/numerics/Half.h"

#include <cblas.h>
#include <stdexcept>

namespace ampc::cpu::detail {

using num::bf16;
using num::half;

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

void widen(const TensorRef &t, float *dst) {
  int64_t n = t.numel();
  switch (t.dtype) {
  case DType::F32:
    std::memcpy(dst, t.data, size_t(n) * sizeof(float));
    return;
  case DType::F16:
    halfToFloat(static_cast<const half *>(t.data), dst, n);
    return;
  case DType::BF16: {
    auto *p = static_cast<const bf16 *>(t.data);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = float(p[i]);
    return;
  }
  default:
    fail("widen", "expected a float tensor");
  }
}

void narrow(const float *src, const TensorRef &t) {
  int64_t n = t.numel();
  switch (t.dtype) {
  case DType::F32:
    if (src != t.data)
      std::memcpy(t.data, src, size_t(n) * sizeof(float));
    return;
  case DType::F16:
    floatToHalf(src, static_cast<half *>(t.data), n);
    return;
  case DType::BF16: {
    auto *p = static_cast<bf16 *>(t.data);
    for (int64_t i = 0; i < n; ++i)
      p[i] = bf16(src[i]);
    return;
  }
  default:
    fail("narrow", "expected a float tensor");
  }
}

std::vector<int64_t> loadIds(std::string_view op, const TensorRef &t) {
  int64_t n = t.numel();
  std::vector<int64_t> ids(static_cast<size_t>(n));
  if (t.dtype == DType::I64)
    std::memcpy(ids.data(), t.data, size_t(n) * sizeof(int64_t));
  else if (t.dtype == DType::I32)
    for (int64_t i = 0; i < n; ++i)
      ids[i] = static_cast<const int32_t *>(t.data)[i];
  else
    fail(op, "ids/labels must be i32 or i64");
  return ids;
}

FloatIn::FloatIn(const TensorRef &t) {
  if (t.dtype == DType::F32) {
    p_ = static_cast<const float *>(t.data);
    return;
  }
  // Uncleared (new float[n], not a vector): clearing it was 4% of a bf16
  // gpt_tiny step, and widen writes every element.
  buf_.reset(new float[size_t(t.numel())]);
  widen(t, buf_.get());
  p_ = buf_.get();
}

FloatOut::FloatOut(const TensorRef &t, bool zeroed) : t_(t) {
  if (!isFloat(t.dtype))
    fail("output", "expected a float result");
  if (t.dtype == DType::F32) {
    p_ = static_cast<float *>(t.data);
    if (zeroed)
      std::memset(p_, 0, size_t(t.numel()) * sizeof(float));
    return;
  }
  buf_.reset(zeroed ? new float[size_t(t.numel())]()
                    : new float[size_t(t.numel())]);
  p_ = buf_.get();
}

void FloatOut::commit() {
  if (t_.dtype != DType::F32)
    narrow(p_, t_);
}

void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           float alpha, const float *a, int64_t lda, const float *b,
           int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // BLAS may leave C alone when k == 0: scale it ourselves.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  if (beta == 0.0f) {
    // OpenBLAS clears C for beta == 0 with one scalar store per element
    // (sgemm_beta: 7% of the gpt_tiny step) and then adds the product into
    // it; clearing it here and asking for C += A B gives the same bits.
    for (int64_t i = 0; i < m; ++i)
      std::memset(c + i * ldc, 0, size_t(n) * sizeof(float));
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

} // namespace ampc::cpu::detail
