//===- CudaTestUtil.h - Helpers of the CUDA GPU tests -----------*- C++ -*-===//
//
// What ampc-cuda-tests' files share: the skip without a device, seeded
// random inputs, f32/f16/bf16 element bytes on the host (rounded as the
// kernels' casts round) and a device copy freed at scope end. Header-only,
// in a named namespace, so each test file keeps its own helpers in an
// anonymous one.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNIT_CUDATESTUTIL_H
#define AMPC_TEST_UNIT_CUDATESTUTIL_H

#include "runtime/cuda/Kernels.h"
#include "runtime/numerics/Half.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// The tests that run kernels skip on a machine without a CUDA device (CI).
#define REQUIRE_GPU()                                                          \
  if (!ampc::cuda::deviceAvailable())                                          \
  GTEST_SKIP() << "no CUDA device"

namespace ampc::cudatest {

using rt::DType;

// |n| normal samples (mean |mean|, deviation |scale|) from mt19937(|seed|).
inline std::vector<float> randoms(size_t n, float scale = 1.0f,
                                  unsigned seed = 1, float mean = 0.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(mean, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

// |v| stored at |p| as one |dt| element (f32, f16 or bf16; half rounded to
// nearest even, as a cast rounds), and one such element read back exactly.
inline void storeFloat(void *p, DType dt, float v) {
  if (dt == DType::F32) {
    std::memcpy(p, &v, 4);
  } else if (dt == DType::F16) {
    num::half h = num::half(v);
    std::memcpy(p, &h, 2);
  } else {
    uint16_t bits = num::bf16::fromFloat(v);
    std::memcpy(p, &bits, 2);
  }
}

inline float loadFloat(const void *p, DType dt) {
  if (dt == DType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (dt == DType::F16) {
    num::half h;
    std::memcpy(&h, p, 2);
    return float(h);
  }
  num::bf16 b;
  std::memcpy(&b.bits, p, 2);
  return float(b);
}

// Host bytes of |v| in |dt|, and back.
inline std::vector<unsigned char> bytesOf(const std::vector<float> &v,
                                          DType dt) {
  size_t size = kernels::dtypeSize(dt);
  std::vector<unsigned char> b(v.size() * size);
  for (size_t i = 0; i < v.size(); ++i)
    storeFloat(&b[i * size], dt, v[i]);
  return b;
}

inline std::vector<float> floatsOf(const std::vector<unsigned char> &b,
                                   DType dt) {
  size_t size = kernels::dtypeSize(dt);
  std::vector<float> v(b.size() / size);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = loadFloat(&b[i * size], dt);
  return v;
}

// A device copy of host elements, freed at scope end; |offset| bytes past
// a 256-aligned allocation (to test the element-wise fallback on
// misaligned tensors); one spare byte, so an empty copy is a valid pointer.
template <class T> struct DeviceCopy {
  unsigned char *base = nullptr;
  T *p = nullptr;
  size_t n = 0; // elements

  explicit DeviceCopy(const std::vector<T> &h, size_t offset = 0)
      : n(h.size()) {
    cuda::check(cudaMalloc(&base, n * sizeof(T) + offset + 1), "malloc");
    p = reinterpret_cast<T *>(base + offset);
    put(h);
  }
  DeviceCopy(const DeviceCopy &) = delete;
  DeviceCopy &operator=(const DeviceCopy &) = delete;
  ~DeviceCopy() { cudaFree(base); }

  void put(const std::vector<T> &h) {
    cuda::check(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice),
                "h2d");
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    cuda::check(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost),
                "d2h");
    return h;
  }
};

// Device bytes of any dtype.
using DevBuf = DeviceCopy<unsigned char>;

// Sets environment variable |name| to |value| (null: unsets it) for a
// scope, then restores what it was; set() changes it within the scope.
struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char *n, const char *value) : name(n) {
    const char *o = std::getenv(n);
    had = o != nullptr;
    old = o ? o : "";
    set(value);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
  ~ScopedEnv() { set(had ? old.c_str() : nullptr); }
  void set(const char *value) {
    if (value)
      setenv(name.c_str(), value, 1);
    else
      unsetenv(name.c_str());
  }
};

} // namespace ampc::cudatest

#endif
