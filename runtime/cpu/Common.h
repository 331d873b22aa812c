//===- Common.h - Shared helpers of the CPU kernels (internal) --*- C++ -*-===//
//
// Float views that implement the numerics contract in one place: FloatIn
// widens an input to float (aliasing f32 data), FloatOut collects float
// results and rounds each once to the output element type on commit().
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_COMMON_H
#define AMPC_RUNTIME_CPU_COMMON_H

#include "runtime/cpu/Kernels.h"
#include "runtime/kernels/Geometry.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ampc::cpu {

// Every kernel's declaration, from the single op list.
#define AMPC_KERNEL_OP(name, function)                                         \
  void function(std::span<const TensorRef> in, std::span<const TensorRef> out, \
                const Attrs &attrs);
#include "runtime/kernels/Ops.def"

namespace detail {

// fail, required, optional and the op geometries: runtime/kernels/Geometry.h,
// shared with runtime/cuda.
using namespace kernels::detail;

bool isFloat(DType t);
// Widens n elements of a float tensor to float.
void widen(const TensorRef &t, float *dst);
// Rounds n floats once each to |t|'s element type and stores them.
void narrow(const float *src, const TensorRef &t);
// Reads i32/i64 ids as int64.
std::vector<int64_t> loadIds(std::string_view op, const TensorRef &t);

// Read-only float data of a float tensor.
class FloatIn {
public:
  explicit FloatIn(const TensorRef &t);
  const float *data() const { return p_; }
  float operator[](int64_t i) const { return p_[i]; }

private:
  const float *p_;
  std::unique_ptr<float[]> buf_; // not cleared: widen fills it
};

// Float destination for a float tensor; f32 results are written in place.
// Its contents are undefined unless |zeroed| (as an f32 result's are: the
// arena's earlier values), so a kernel that accumulates asks for zeros.
class FloatOut {
public:
  explicit FloatOut(const TensorRef &t, bool zeroed = false);
  float *data() { return p_; }
  float &operator[](int64_t i) { return p_[i]; }
  // Rounds to the element type (no-op for f32). Call once, when done.
  void commit();

private:
  const TensorRef &t_;
  float *p_;
  std::unique_ptr<float[]> buf_;
};

// Calls f(outIndex, offsetA, offsetB) for every element of |out| in
// row-major order, with a and b broadcast to |out|.
template <class F>
void forEachBroadcast(std::string_view op, const TensorRef &out,
                      const TensorRef &a, const TensorRef &b, F &&f) {
  int64_t sa[kMaxRank], sb[kMaxRank];
  broadcastStrides(op, a, out, sa);
  broadcastStrides(op, b, out, sb);
  int r = out.rank;
  if (out.numel() == 0)
    return;
  if (r == 0) {
    f(0, 0, 0);
    return;
  }
  int64_t idx[kMaxRank] = {};
  int64_t inner = out.shape[r - 1], ia = sa[r - 1], ib = sb[r - 1];
  int64_t oa = 0, ob = 0, o = 0, total = out.numel();
  while (o < total) {
    for (int64_t j = 0; j < inner; ++j)
      f(o + j, oa + j * ia, ob + j * ib);
    o += inner;
    // Advance the odometer over the outer dimensions.
    for (int d = r - 2; d >= 0; --d) {
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < out.shape[d])
        break;
      oa -= sa[d] * out.shape[d];
      ob -= sb[d] * out.shape[d];
      idx[d] = 0;
    }
  }
}

// C = alpha * op(A) op(B) + beta * C, row-major float, via cblas_sgemm.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           float alpha, const float *a, int64_t lda, const float *b,
           int64_t ldb, float beta, float *c, int64_t ldc);

} // namespace detail
} // namespace ampc::cpu

#endif
