//===- CudaHalfIoTest.cpp - FP32-computing kernels reading/writing half ---===//
//
// graph-absorb-casts hands cross_entropy, its backward and the norms f16/
// bf16 operands and results directly (the casts around them removed). The
// CUDA kernels must give what the CPU library gives on the same mixed-type
// tensors, and the fused cross-entropy backward (the default) must be
// bitwise the previous three-launch path (AMPC_CUDA_CE_BACKWARD=rows).
// Needs a CUDA device; skips without one.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/numerics/Half.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;

namespace {

#define REQUIRE_GPU()                                                          \
  if (!cuda::deviceAvailable())                                                \
  GTEST_SKIP() << "no CUDA device"

size_t bytesOf(DType t) {
  return t == DType::F32 || t == DType::I32 ? 4 : t == DType::I64 ? 8 : 2;
}

// A tensor on the host and its device copy, in any dtype.
struct Tensor {
  DType type;
  std::vector<int64_t> shape;
  std::vector<unsigned char> host;
  void *dev = nullptr;

  Tensor(DType t, std::vector<int64_t> s) : type(t), shape(std::move(s)) {
    host.resize(size_t(numel()) * bytesOf(type));
    cuda::check(cudaMalloc(&dev, host.size()), "malloc");
    // NaN bytes: an element the kernel never writes fails the comparison.
    cuda::check(cudaMemset(dev, 0xff, host.size()), "memset");
  }
  Tensor(const Tensor &) = delete;
  ~Tensor() { cudaFree(dev); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  // Rounds |v| to the type (as a cast would) and uploads it.
  void set(const std::vector<float> &v) {
    for (size_t i = 0; i < v.size(); ++i)
      store(i, v[i]);
    cuda::check(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice),
                "h2d");
  }
  void setIds(const std::vector<int64_t> &ids) {
    std::memcpy(host.data(), ids.data(), host.size());
    cuda::check(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice),
                "h2d");
  }
  void store(size_t i, float v) {
    unsigned char *p = host.data() + i * bytesOf(type);
    if (type == DType::F32)
      std::memcpy(p, &v, 4);
    else if (type == DType::F16) {
      num::half h = static_cast<num::half>(v);
      std::memcpy(p, &h, 2);
    } else {
      uint16_t b = num::bf16(v).bits;
      std::memcpy(p, &b, 2);
    }
  }
  static float load(const unsigned char *p, DType type) {
    if (type == DType::F32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    if (type == DType::F16) {
      num::half h;
      std::memcpy(&h, p, 2);
      return float(h);
    }
    num::bf16 b;
    std::memcpy(&b.bits, p, 2);
    return float(b);
  }
  TensorRef hostRef() { return cpu::makeRef(host.data(), type, shape); }
  TensorRef devRef() { return cpu::makeRef(dev, type, shape); }
  std::vector<unsigned char> deviceBytes() const {
    std::vector<unsigned char> b(host.size());
    cuda::check(cudaMemcpy(b.data(), dev, b.size(), cudaMemcpyDeviceToHost),
                "d2h");
    return b;
  }
  std::vector<float> floats(const std::vector<unsigned char> &b) const {
    std::vector<float> v(static_cast<size_t>(numel()));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = load(b.data() + i * bytesOf(type), type);
    return v;
  }
};

std::vector<float> randoms(size_t n, float scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

// Runs |name| on both libraries; every output's device values must be
// within |rtol| of the CPU's (half outputs: a couple of ulps).
void compare(const char *name, std::vector<Tensor *> ins,
             std::vector<Tensor *> outs, const cpu::Attrs &attrs, float rtol,
             float atol) {
  std::vector<TensorRef> ci, gi, co, go;
  for (Tensor *t : ins)
    ci.push_back(t->hostRef()), gi.push_back(t->devRef());
  for (Tensor *t : outs)
    co.push_back(t->hostRef()), go.push_back(t->devRef());
  cpu::lookup(name)(ci, co, attrs);
  cuda::lookup(name)(gi, go, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  for (size_t k = 0; k < outs.size(); ++k) {
    SCOPED_TRACE(std::string(name) + " output " + std::to_string(k));
    std::vector<float> want = outs[k]->floats(outs[k]->host);
    std::vector<float> got = outs[k]->floats(outs[k]->deviceBytes());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i]))
          << "at " << i;
  }
}

struct EnvGuard {
  ~EnvGuard() { unsetenv("AMPC_CUDA_CE_BACKWARD"); }
};

// bf16 and f16 logits (a vocabulary row wider than a block's stride, one
// ignored label), FP32 loss, half dlogits; both backward paths.
TEST(CudaHalfIo, CrossEntropyHalfLogitsAndGradient) {
  REQUIRE_GPU();
  EnvGuard guard;
  const int64_t rows = 6, classes = 1000;
  for (DType t : {DType::BF16, DType::F16}) {
    for (double ls : {0.0, 0.1}) {
      SCOPED_TRACE(std::string(t == DType::F16 ? "f16" : "bf16") +
                   " smoothing " + std::to_string(ls));
      Tensor z(t, {rows, classes}), y(DType::I64, {rows}),
          g(DType::F32, {}), loss(DType::F32, {}), dz(t, {rows, classes}),
          dzRows(t, {rows, classes});
      z.set(randoms(size_t(rows * classes), 3.0f, 7));
      y.setIds({3, 999, -100, 0, 512, 3});
      g.set({65536.0f});
      cpu::Attrs attrs{{"label_smoothing", ls}};
      compare("graph.cross_entropy", {&z, &y}, {&loss}, attrs, 1e-5f, 1e-5f);
      setenv("AMPC_CUDA_CE_BACKWARD", "fused", 1);
      compare("graph.cross_entropy_backward", {&z, &y, &g}, {&dz}, attrs,
              1e-2f, 1e-3f);
      // The previous path: bitwise the same device result.
      setenv("AMPC_CUDA_CE_BACKWARD", "rows", 1);
      std::vector<TensorRef> gi{z.devRef(), y.devRef(), g.devRef()},
          go{dzRows.devRef()};
      cuda::lookup("graph.cross_entropy_backward")(gi, go, attrs, nullptr);
      cuda::check(cudaDeviceSynchronize(), "sync");
      EXPECT_EQ(dz.deviceBytes(), dzRows.deviceBytes());
      // The ignored row is zero.
      std::vector<float> d = dz.floats(dz.deviceBytes());
      for (int64_t j = 0; j < classes; ++j)
        ASSERT_EQ(d[size_t(2 * classes + j)], 0.0f) << j;
    }
  }
}

// layer_norm on an f32 residual writing bf16 (its narrowing cast absorbed);
// its backward reading a bf16 cotangent; rms_norm reading and writing f16
// with FP32 weights.
TEST(CudaHalfIo, NormsHalfInputsAndOutputs) {
  REQUIRE_GPU();
  for (auto [m, d] : {std::pair<int64_t, int64_t>{64, 96}, {5, 1000}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " d " + std::to_string(d));
    Tensor x(DType::F32, {m, d}), w(DType::F32, {d}), b(DType::F32, {d}),
        y(DType::BF16, {m, d}), g(DType::BF16, {m, d}), dx(DType::F32, {m, d}),
        dw(DType::F32, {d}), db(DType::F32, {d});
    x.set(randoms(size_t(m * d), 1.0f, 1));
    w.set(randoms(size_t(d), 1.0f, 2));
    b.set(randoms(size_t(d), 1.0f, 3));
    g.set(randoms(size_t(m * d), 1.0f, 4));
    cpu::Attrs eps{{"eps", 1e-5}};
    compare("graph.layer_norm", {&x, &w, &b}, {&y}, eps, 1e-2f, 1e-2f);
    compare("graph.layer_norm_backward", {&x, &w, &g}, {&dx, &dw, &db}, eps,
            1e-4f, 1e-4f);
    Tensor xh(DType::F16, {m, d}), yh(DType::F16, {m, d}),
        gh(DType::F16, {m, d}), dxh(DType::F16, {m, d}), dwr(DType::F32, {d});
    xh.set(randoms(size_t(m * d), 1.0f, 5));
    gh.set(randoms(size_t(m * d), 1.0f, 6));
    cpu::Attrs rmsEps{{"eps", 0x1p-23}};
    compare("graph.rms_norm", {&xh, &w}, {&yh}, rmsEps, 2e-3f, 2e-3f);
    compare("graph.rms_norm_backward", {&xh, &w, &gh}, {&dxh, &dwr}, rmsEps,
            2e-3f, 2e-3f);
  }
}

} // namespace
