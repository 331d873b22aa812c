//===- CudaGemmGeluTest.cpp - The tanh GELU in a cuBLASLt epilogue --------===//
//
// graph.linear_gelu (GELU_AUX_BIAS, or GELU_AUX without a bias) and
// graph.matmul_gelu_backward (DGELU) run as one cublasLtMatmul. They must
// give what the CPU library gives (the FP32 GEMM, the GELU, one rounding)
// and what the separate path gives (AMPC_CUDA_GEMM_GELU=separate: the GEMM,
// then the gelu kernel; it rounds twice), within a few ulps. f32, bf16 and
// f16; with and without a bias; the backward's transposed flags. N a
// multiple of 8 (AMPC_CUDA_GEMM_GELU=fused for f16/bf16: the epilogue must
// run; f32 may fall back) and
// N = 12 (cuBLASLt needs the GELU matrix's leading dimension divisible by 8,
// so the default falls back). Needs a CUDA device; skips without one.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Kernels.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using cudatest::bytesOf;
using cudatest::DevBuf;
using cudatest::floatsOf;
using cudatest::randoms;
using cudatest::ScopedEnv;
using rt::DType;

namespace {

constexpr const char *kEnv = "AMPC_CUDA_GEMM_GELU";

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// A tensor of |type| on the host (the CPU library's operand) and on the
// device, with the same elements.
struct Tensor {
  DType type;
  std::vector<int64_t> shape;
  std::vector<unsigned char> host;
  DevBuf dev;

  // |values| rounded to |type|.
  Tensor(DType t, std::vector<int64_t> s, const std::vector<float> &values)
      : type(t), shape(std::move(s)), host(bytesOf(values, t)), dev(host) {}
  // An output: NaN bytes (0xff.. is a NaN in all three types), so an
  // element never written fails the comparison.
  Tensor(DType t, std::vector<int64_t> s)
      : type(t), shape(std::move(s)),
        host(size_t(numel(shape)) * kernels::dtypeSize(t), 0xff), dev(host) {}

  TensorRef devRef() { return cpu::makeRef(dev.p, type, shape); }
  TensorRef hostRef() { return cpu::makeRef(host.data(), type, shape); }
  std::vector<float> hostValues() const { return floatsOf(host, type); }
  std::vector<float> download() const { return floatsOf(dev.get(), type); }
};

const char *name(DType t) {
  return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16";
}

// Relative slack for the rounding of each path: f32 as the other GEMM
// tests; f16 and bf16 as CudaGemmBgradTest (about 8 and 5 unit roundoffs),
// a couple of ulps of the result and of the GEMM result the separate path
// rounds before its GELU.
float relTol(DType t) {
  return t == DType::F32 ? 1e-4f : t == DType::F16 ? 4e-3f : 2e-2f;
}
// cuBLASLt's GELU may evaluate tanh with the hardware approximation
// (tanh.approx.f32: relative error about 2^-11); its effect on the result
// is at most this (twice that, as the bound below is nearly reached) times
// |d result / d tanh|.
constexpr double kTanhTol = 0x1p-10;
// The FP32 GEMM's summation order (K <= 64, terms O(1)).
constexpr double kAbsTol = 1e-5;

constexpr double kSqrt2OverPi = 0.7978845608028654, kKappa = 0.044715;

// |d gelu_tanh'(z) / d tanh| bounded: 0.5 + |z| c (1 + 3 kappa z^2).
double dgeluSensitivity(double z) {
  return 0.5 + std::fabs(z) * kSqrt2OverPi * (1 + 3 * kKappa * z * z);
}

void expectWithin(const std::vector<float> &got, const std::vector<float> &want,
                  const std::vector<double> &tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol[i]) << what << " at " << i;
}

// linear_gelu's result: the separate path rounds z (error <= u |z| times
// gelu' <= 1.13) and both round the result; the tanh term is 0.5 |z|.
std::vector<double> geluTol(DType t, const std::vector<float> &want,
                            const std::vector<float> &z) {
  std::vector<double> tol(want.size());
  for (size_t i = 0; i < tol.size(); ++i)
    tol[i] = relTol(t) * (std::fabs(want[i]) + std::fabs(z[i])) +
             kTanhTol * std::fabs(z[i]) + kAbsTol;
  return tol;
}

// The preactivation: the same FP32 value rounded once on every path, up to
// the summation order.
std::vector<double> preTol(DType t, const std::vector<float> &want) {
  std::vector<double> tol(want.size());
  for (size_t i = 0; i < tol.size(); ++i)
    tol[i] = relTol(t) * std::fabs(want[i]) + kAbsTol;
  return tol;
}

// matmul_gelu_backward's result acc * gelu'(z): the separate path's
// rounding of acc is relative to the result, like the final rounding; the
// tanh term is |acc| |d gelu' / d tanh|.
std::vector<double> dgeluTol(DType t, const std::vector<float> &want,
                             const std::vector<double> &acc,
                             const std::vector<float> &z) {
  std::vector<double> tol(want.size());
  for (size_t i = 0; i < tol.size(); ++i)
    tol[i] = relTol(t) * std::fabs(want[i]) +
             kTanhTol * std::fabs(acc[i]) * dgeluSensitivity(z[i]) + kAbsTol;
  return tol;
}

// op(A) op(B) in double (A [M, K], or [K, M] with |ta|; B [K, N], or
// [N, K] with |tb|): the GEMM's accumulator, for the tolerance.
std::vector<double> hostMatmul(const std::vector<float> &a,
                               const std::vector<float> &b, int64_t m,
                               int64_t n, int64_t k, bool ta, bool tb) {
  std::vector<double> c(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(ta ? a[p * m + i] : a[i * k + p]) *
             double(tb ? b[j * k + p] : b[p * n + j]);
      c[size_t(i * n + j)] = s;
    }
  return c;
}

void runGpu(const char *op, std::vector<TensorRef> in,
            std::vector<TensorRef> out, const cpu::Attrs &attrs) {
  cuda::lookup(op)(in, out, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
}

struct LinearCase {
  std::vector<int64_t> xShape; // [..., K]
  int64_t n;
  bool fused; // N % 8 == 0: the epilogue must run
};

TEST(CudaGemmGelu, LinearGeluMatchesCpuAndSeparate) {
  REQUIRE_GPU();
  ScopedEnv env(kEnv, nullptr);
  cpu::Attrs attrs;
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    for (const LinearCase &c :
         {LinearCase{{64, 64}, 256, true}, LinearCase{{4, 16, 64}, 256, true},
          LinearCase{{20, 24}, 12, false}}) {
      for (bool withBias : {true, false}) {
        int64_t k = c.xShape.back(), n = c.n;
        std::vector<int64_t> yShape = c.xShape;
        yShape.back() = n;
        SCOPED_TRACE(std::string(name(t)) + " x rank " +
                     std::to_string(c.xShape.size()) + " k " +
                     std::to_string(k) + " n " + std::to_string(n) +
                     (withBias ? " bias" : " no bias"));
        // z about N(0, 1): the GELU's curved part, not its linear tails.
        Tensor x(t, c.xShape, randoms(size_t(numel(c.xShape)), 1.0f, 1));
        Tensor w(t, {n, k},
                 randoms(size_t(n * k), 1.0f / std::sqrt(float(k)), 2));
        Tensor b(t, {n}, randoms(size_t(n), 0.5f, 3));
        Tensor y(t, yShape), z(t, yShape), ySep(t, yShape), zSep(t, yShape),
            yCpu(t, yShape), zCpu(t, yShape);
        auto ins = [&](bool dev) {
          std::vector<TensorRef> v{dev ? x.devRef() : x.hostRef(),
                                   dev ? w.devRef() : w.hostRef()};
          if (withBias)
            v.push_back(dev ? b.devRef() : b.hostRef());
          return v;
        };
        // The aligned half shapes must take the epilogue (`fused`: a
        // fallback is an error); N = 12 falls back under the default, and
        // so may f32, for which no cuBLASLt version promises the GELU
        // epilogues (either path must match the CPU).
        env.set(c.fused && t != DType::F32 ? "fused" : nullptr);
        runGpu("graph.linear_gelu", ins(true), {y.devRef(), z.devRef()},
               attrs);
        env.set("separate");
        runGpu("graph.linear_gelu", ins(true), {ySep.devRef(), zSep.devRef()},
               attrs);
        env.set(nullptr);
        cpu::lookup("graph.linear_gelu")(
            ins(false), std::vector<TensorRef>{yCpu.hostRef(), zCpu.hostRef()},
            attrs);
        std::vector<float> wantY = yCpu.hostValues(),
                           wantZ = zCpu.hostValues();
        std::vector<float> gotY = y.download(), gotZ = z.download(),
                           sepY = ySep.download(), sepZ = zSep.download();
        expectWithin(gotZ, wantZ, preTol(t, wantZ), "preactivation vs CPU");
        expectWithin(sepZ, wantZ, preTol(t, wantZ),
                     "separate preactivation vs CPU");
        expectWithin(gotY, wantY, geluTol(t, wantY, wantZ), "result vs CPU");
        expectWithin(sepY, wantY, geluTol(t, wantY, wantZ),
                     "separate result vs CPU");
        expectWithin(gotY, sepY, geluTol(t, sepY, wantZ),
                     "result vs separate");
      }
    }
  }
}

struct BackwardCase {
  int64_t m, n, k;
  bool fused;
};

TEST(CudaGemmGelu, MatmulGeluBackwardMatchesCpuAndSeparate) {
  REQUIRE_GPU();
  ScopedEnv env(kEnv, nullptr);
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    for (const BackwardCase &c :
         {BackwardCase{64, 256, 64, true}, BackwardCase{20, 12, 24, false}}) {
      // dZ = dH W (neither transposed) is the MLP's; the others read an
      // operand in place through cuBLASLt's transA / transB.
      for (auto [ta, tb] : {std::pair{false, false}, std::pair{true, false},
                            std::pair{false, true}}) {
        int64_t m = c.m, n = c.n, k = c.k;
        SCOPED_TRACE(std::string(name(t)) + " m " + std::to_string(m) +
                     " n " + std::to_string(n) + " k " + std::to_string(k) +
                     " ta " + std::to_string(ta) + " tb " +
                     std::to_string(tb));
        cpu::Attrs attrs{{"lhs_transposed", ta}, {"rhs_transposed", tb}};
        std::vector<int64_t> aShape = ta ? std::vector<int64_t>{k, m}
                                         : std::vector<int64_t>{m, k};
        std::vector<int64_t> bShape = tb ? std::vector<int64_t>{n, k}
                                         : std::vector<int64_t>{k, n};
        // acc about N(0, 1); z over the GELU's curved part and both tails.
        Tensor a(t, aShape, randoms(size_t(m * k), 1.0f, 4));
        Tensor b(t, bShape,
                 randoms(size_t(k * n), 1.0f / std::sqrt(float(k)), 5));
        Tensor z(t, {m, n}, randoms(size_t(m * n), 1.5f, 6));
        Tensor r(t, {m, n}), rSep(t, {m, n}), rCpu(t, {m, n});
        env.set(c.fused && t != DType::F32 ? "fused" : nullptr);
        runGpu("graph.matmul_gelu_backward",
               {a.devRef(), b.devRef(), z.devRef()}, {r.devRef()}, attrs);
        env.set("separate");
        runGpu("graph.matmul_gelu_backward",
               {a.devRef(), b.devRef(), z.devRef()}, {rSep.devRef()}, attrs);
        env.set(nullptr);
        cpu::lookup("graph.matmul_gelu_backward")(
            std::vector<TensorRef>{a.hostRef(), b.hostRef(), z.hostRef()},
            std::vector<TensorRef>{rCpu.hostRef()}, attrs);
        std::vector<double> acc = hostMatmul(a.hostValues(), b.hostValues(),
                                             m, n, k, ta, tb);
        std::vector<float> zs = z.hostValues(), want = rCpu.hostValues();
        std::vector<float> got = r.download(), sep = rSep.download();
        expectWithin(got, want, dgeluTol(t, want, acc, zs), "result vs CPU");
        expectWithin(sep, want, dgeluTol(t, want, acc, zs),
                     "separate result vs CPU");
        expectWithin(got, sep, dgeluTol(t, sep, acc, zs),
                     "result vs separate");
      }
    }
  }
}

} // namespace
