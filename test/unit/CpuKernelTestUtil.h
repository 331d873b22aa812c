//===- CpuKernelTestUtil.h - Tensors and references for kernel tests ------===//
#ifndef AMPC_TEST_UNIT_CPUKERNELTESTUTIL_H
#define AMPC_TEST_UNIT_CPUKERNELTESTUTIL_H

#include "runtime/cpu/Kernels.h"
#include "runtime/numerics/Half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ampc::cpu::test {

using num::bf16;
using num::half;

inline const char *name(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  }
  return "?";
}

// Owned storage plus its TensorRef.
struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  Tensor() = default;
  Tensor(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    bytes.assign(size_t(numel()) * dtypeSize(t), 0);
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  TensorRef ref() { return makeRef(bytes.data(), dtype, shape); }
  // Element i widened to double.
  double get(int64_t i) const {
    const void *p = bytes.data();
    switch (dtype) {
    case DType::F32: return static_cast<const float *>(p)[i];
    case DType::F16: return double(static_cast<const half *>(p)[i]);
    case DType::BF16: return float(static_cast<const bf16 *>(p)[i]);
    case DType::I32: return static_cast<const int32_t *>(p)[i];
    case DType::I64: return double(static_cast<const int64_t *>(p)[i]);
    }
    return 0;
  }
  // Stores v rounded once to the element type.
  void set(int64_t i, double v) {
    void *p = bytes.data();
    switch (dtype) {
    case DType::F32: static_cast<float *>(p)[i] = float(v); break;
    case DType::F16: static_cast<half *>(p)[i] = num::roundToHalf(v); break;
    case DType::BF16: static_cast<bf16 *>(p)[i] = num::roundToBF16(v); break;
    case DType::I32: static_cast<int32_t *>(p)[i] = int32_t(v); break;
    case DType::I64: static_cast<int64_t *>(p)[i] = int64_t(v); break;
    }
  }
  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(numel()));
    for (int64_t i = 0; i < numel(); ++i) v[i] = get(i);
    return v;
  }
  uint64_t bits(int64_t i) const {
    uint64_t b = 0;
    size_t s = dtypeSize(dtype);
    std::memcpy(&b, bytes.data() + i * s, s);
    return b;
  }
};

// A tensor of values uniform in [lo, hi), each representable in |t|.
inline Tensor randomTensor(DType t, std::vector<int64_t> shape, uint32_t seed,
                           double lo = -2.0, double hi = 2.0) {
  Tensor x(t, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, dist(gen));
  return x;
}

inline Tensor fromValues(DType t, std::vector<int64_t> shape,
                         const std::vector<double> &v) {
  Tensor x(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, v[size_t(i)]);
  return x;
}

// Rounds a float once to |t|, the library's contract for results.
inline double roundFromFloat(DType t, float f) {
  switch (t) {
  case DType::F16: return double(static_cast<half>(f));
  case DType::BF16: return float(bf16(f));
  default: return f;
  }
}

// Rounds a double once to |t|.
inline double roundTo(DType t, double v) {
  switch (t) {
  case DType::F16: return double(num::roundToHalf(v));
  case DType::BF16: return float(num::roundToBF16(v));
  default: return double(float(v));
  }
}

// Units in the last place of |t| at magnitude |v|.
inline double ulp(DType t, double v) {
  int bits = t == DType::F16 ? 11 : t == DType::BF16 ? 8 : 24;
  double a = std::fabs(v);
  double minNormal = t == DType::F16 ? 0x1p-14 : 0x1p-126;
  if (a < minNormal) a = minNormal;
  int e;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - bits);
}

inline void run(std::string_view op, std::vector<Tensor *> in,
                std::vector<Tensor *> out, const Attrs &attrs = {}) {
  Kernel k = lookup(op);
  ASSERT_NE(k, nullptr) << op;
  std::vector<TensorRef> ri, ro;
  for (Tensor *t : in) ri.push_back(t ? t->ref() : TensorRef{});
  for (Tensor *t : out) ro.push_back(t ? t->ref() : TensorRef{});
  k(ri, ro, attrs);
}

// Expects |got| within tol of |ref| elementwise, where tol = abs + rel*|ref|.
inline void expectClose(const Tensor &got, const std::vector<double> &ref,
                        double abs, double rel, const std::string &what) {
  ASSERT_EQ(got.numel(), int64_t(ref.size())) << what;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    double tol = abs + rel * std::fabs(ref[i]);
    bool same = got.get(i) == ref[i] ||
                (std::isnan(got.get(i)) && std::isnan(ref[i]));
    if (!same && !(std::fabs(got.get(i) - ref[i]) <= tol)) {
      ADD_FAILURE() << what << " [" << i << "]: got " << got.get(i)
                    << ", want " << ref[i] << " +- " << tol;
      ++bad;
    }
  }
}

// Expects exact equality with values already rounded to got's type.
inline void expectEqual(const Tensor &got, const std::vector<double> &ref,
                        const std::string &what) {
  expectClose(got, ref, 0.0, 0.0, what);
}

// Numerical vector-Jacobian product of f at x with cotangent g (central
// differences in double).
inline std::vector<double>
numericVjp(const std::function<std::vector<double>(const std::vector<double> &)> &f,
           std::vector<double> x, const std::vector<double> &g,
           double h = 1e-5) {
  std::vector<double> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double keep = x[i];
    x[i] = keep + h;
    auto fp = f(x);
    x[i] = keep - h;
    auto fm = f(x);
    x[i] = keep;
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g[j] * (fp[j] - fm[j]);
    dx[i] = s / (2 * h);
  }
  return dx;
}

inline const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};

} // namespace ampc::cpu::test

#endif
