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
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;
using namespace ampc::cudatest;

namespace {

// A tensor on the host and its device copy, in any dtype.
struct Tensor {
  DType type;
  std::vector<int64_t> shape;
  std::vector<unsigned char> host;
  // NaN bytes: an element the kernel never writes fails the comparison.
  DevBuf dev;

  Tensor(DType t, std::vector<int64_t> s)
      : type(t), shape(std::move(s)),
        host(size_t(numel()) * kernels::dtypeSize(type)),
        dev(std::vector<unsigned char>(host.size(), 0xff)) {}
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  // Rounds |v| to the type (as a cast would) and uploads it.
  void set(const std::vector<float> &v) {
    for (size_t i = 0; i < v.size(); ++i)
      storeFloat(host.data() + i * kernels::dtypeSize(type), type, v[i]);
    dev.put(host);
  }
  void setIds(const std::vector<int64_t> &ids) {
    std::memcpy(host.data(), ids.data(), host.size());
    dev.put(host);
  }
  TensorRef hostRef() { return cpu::makeRef(host.data(), type, shape); }
  TensorRef devRef() { return cpu::makeRef(dev.p, type, shape); }
  std::vector<unsigned char> deviceBytes() const { return dev.get(); }
  std::vector<float> floats(const std::vector<unsigned char> &b) const {
    return floatsOf(b, type);
  }
};

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

// bf16 and f16 logits (a vocabulary row wider than a block's stride, one
// ignored label), FP32 loss, half dlogits; both backward paths.
TEST(CudaHalfIo, CrossEntropyHalfLogitsAndGradient) {
  REQUIRE_GPU();
  ScopedEnv ceBackward("AMPC_CUDA_CE_BACKWARD", nullptr);
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
      ceBackward.set("fused");
      compare("graph.cross_entropy_backward", {&z, &y, &g}, {&dz}, attrs,
              1e-2f, 1e-3f);
      // The previous path: bitwise the same device result.
      ceBackward.set("rows");
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
