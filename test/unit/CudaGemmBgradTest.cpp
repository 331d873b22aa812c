//===- CudaGemmBgradTest.cpp - dW and db in one cuBLASLt call -------------===//
//
// graph.matmul_bias_grad runs as one cublasLtMatmul with the BGRADB
// epilogue. It must give what the previous path gives
// (AMPC_CUDA_GEMM_BGRAD=separate: the GEMM, then reduce_sum's column sums)
// and what the CPU library gives: dW within the GEMM's rounding, db within
// a tolerance (the epilogue sums in another order). bf16 and f16, shapes
// from one tile to GPT-2's (AMPC_CUDA_GEMM_BGRAD=fused: the epilogue must
// run), and an unaligned one (it may fall back). Needs a CUDA device; skips
// without one.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/numerics/Half.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;

namespace {

// A half tensor on the host and on the device.
struct HalfTensor {
  DType type;
  std::vector<int64_t> shape;
  std::vector<uint16_t> host;
  void *dev = nullptr;

  HalfTensor(DType t, std::vector<int64_t> s) : type(t), shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    host.assign(size_t(n), 0);
    cuda::check(cudaMalloc(&dev, host.size() * 2), "malloc");
    // NaN bytes: an element never written fails the comparison.
    cuda::check(cudaMemset(dev, 0xff, host.size() * 2), "memset");
  }
  HalfTensor(const HalfTensor &) = delete;
  ~HalfTensor() { cudaFree(dev); }
  float get(size_t i) const {
    if (type == DType::F16) {
      num::half h;
      std::memcpy(&h, &host[i], 2);
      return float(h);
    }
    num::bf16 b;
    b.bits = host[i];
    return float(b);
  }
  void setRandom(unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (uint16_t &v : host) {
      float x = d(rng);
      if (type == DType::F16) {
        num::half h = static_cast<num::half>(x);
        std::memcpy(&v, &h, 2);
      } else {
        v = num::bf16(x).bits;
      }
    }
    cuda::check(cudaMemcpy(dev, host.data(), host.size() * 2,
                           cudaMemcpyHostToDevice),
                "h2d");
  }
  std::vector<float> download() {
    cuda::check(cudaMemcpy(host.data(), dev, host.size() * 2,
                           cudaMemcpyDeviceToHost),
                "d2h");
    std::vector<float> v(host.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = get(i);
    return v;
  }
  TensorRef devRef() { return cpu::makeRef(dev, type, shape); }
  TensorRef hostRef() { return cpu::makeRef(host.data(), type, shape); }
};

struct EnvGuard {
  ~EnvGuard() { unsetenv("AMPC_CUDA_GEMM_BGRAD"); }
};

// Runs matmul_bias_grad on the device with AMPC_CUDA_GEMM_BGRAD=|env|.
void runDevice(const char *env, HalfTensor &g, HalfTensor &x, HalfTensor &dw, HalfTensor &db,
               const cpu::Attrs &attrs) {
  if (env)
    setenv("AMPC_CUDA_GEMM_BGRAD", env, 1);
  else
    unsetenv("AMPC_CUDA_GEMM_BGRAD");
  std::vector<TensorRef> in{g.devRef(), x.devRef()}, out{dw.devRef(), db.devRef()};
  cuda::lookup("graph.matmul_bias_grad")(in, out, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                float rtol, float atol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i]))
        << what << " at " << i;
}

struct Shape3 {
  int64_t k, m, n; // dY^T [M, K] x X [K, N]: dY is [K, M], read transposed
};

TEST(CudaGemmBgrad, FusedMatchesSeparateAndCpu) {
  REQUIRE_GPU();
  EnvGuard guard;
  for (DType t : {DType::BF16, DType::F16}) {
    for (Shape3 s : {Shape3{64, 32, 48}, Shape3{1000, 96, 40},
                     Shape3{8192, 768, 256}, Shape3{37, 13, 11}}) {
      SCOPED_TRACE(std::string(t == DType::F16 ? "f16" : "bf16") + " k " +
                   std::to_string(s.k) + " m " + std::to_string(s.m) + " n " +
                   std::to_string(s.n));
      HalfTensor g(t, {s.k, s.m}), x(t, {s.k, s.n});
      g.setRandom(1), x.setRandom(2);
      HalfTensor dw(t, {s.m, s.n}), db(t, {s.m}), dwSep(t, {s.m, s.n}),
          dbSep(t, {s.m}), dwCpu(t, {s.m, s.n}), dbCpu(t, {s.m});
      cpu::Attrs attrs;
      attrs.set("lhs_transposed", true);
      // The aligned shapes must take the epilogue (`fused`: a fallback is
      // an error); the odd one may fall back (the default).
      bool aligned = s.m % 8 == 0 && s.n % 8 == 0 && s.k % 8 == 0;
      runDevice(aligned ? "fused" : nullptr, g, x, dw, db, attrs);
      runDevice("separate", g, x, dwSep, dbSep, attrs);
      std::vector<TensorRef> ci{g.hostRef(), x.hostRef()},
          co{dwCpu.hostRef(), dbCpu.hostRef()};
      cpu::lookup("graph.matmul_bias_grad")(ci, co, attrs);
      std::vector<float> wantW(dwCpu.host.size()), wantB(dbCpu.host.size());
      for (size_t i = 0; i < wantW.size(); ++i)
        wantW[i] = dwCpu.get(i);
      for (size_t i = 0; i < wantB.size(); ++i)
        wantB[i] = dbCpu.get(i);
      // Sums of K unit normals: |value| ~ sqrt(K); a few half ulps of that
      // (bf16: 2^-8 relative) plus FP32 reordering.
      float rtol = t == DType::BF16 ? 2e-2f : 4e-3f;
      float atol = rtol * std::sqrt(float(s.k));
      std::vector<float> w = dw.download(), b = db.download();
      expectNear(w, dwSep.download(), rtol, atol, "dW fused vs separate");
      expectNear(b, dbSep.download(), rtol, atol, "db fused vs separate");
      expectNear(w, wantW, rtol, atol, "dW fused vs CPU");
      expectNear(b, wantB, rtol, atol, "db fused vs CPU");
      // The separate path's db is reduce_sum's: the same sum as the CPU's
      // in FP32, rounded once.
      expectNear(dbSep.download(), wantB, rtol, atol, "db separate vs CPU");
    }
  }
}

} // namespace
