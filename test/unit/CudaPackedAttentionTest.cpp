//===- CudaPackedAttentionTest.cpp - packed_attention on the device --------===//
//
// graph.packed_attention and its backward on the CUDA library, against the
// unpacked kernels (q, k, v moved to [B, H, T, D] on the host, the result
// and dq, dk, dv moved back) and against the CPU library in FP32:
// - the strided path (cuDNN reading q, k, v and writing dqkv inside the
//   packed tensors, AMPC_CUDA_ATTENTION=flash so a silent fallback fails)
//   against unpacked flash and the CPU;
// - the copy path (AMPC_CUDA_PACKED_ATTENTION=copies) and the math fallback
//   (AMPC_CUDA_ATTENTION=math) bitwise equal to the unpacked kernels on the
//   same path: they run them on contiguous copies;
// - f32 (not eligible for flash) takes the copy path and equals unpacked.
// Tolerances as CudaFlashAttentionTest.cpp. Skips without a GPU (and the
// flash cases without the cuDNN frontend).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/FlashAttention.h"
#include "runtime/cuda/Kernels.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;
using namespace ampc::cudatest;

namespace {

struct Case {
  DType t;
  int64_t b, tq, h, d;
  bool causal;
  int64_t e() const { return h * d; }
};

std::string name(const Case &c) {
  const char *t = c.t == DType::F16 ? "f16" : c.t == DType::BF16 ? "bf16" : "f32";
  return std::string(t) + " B" + std::to_string(c.b) + " T" +
         std::to_string(c.tq) + " H" + std::to_string(c.h) + " D" +
         std::to_string(c.d) + (c.causal ? " causal" : "");
}

cpu::Attrs attrsOf(const Case &c) {
  cpu::Attrs a{{"heads", c.h}};
  if (c.causal)
    a.set("causal", true);
  return a;
}

// Host values (rounded to the type) of qkv [B, T, 3E] and g [B, T, E].
struct Inputs {
  std::vector<float> qkv, g;
  explicit Inputs(const Case &c)
      : qkv(floatsOf(bytesOf(randoms(size_t(c.b * c.tq * 3 * c.e()), 1.0f, 5),
                             c.t),
                     c.t)),
        g(floatsOf(bytesOf(randoms(size_t(c.b * c.tq * c.e()), 1.0f, 6), c.t),
                   c.t)) {}
};

// o [B, T, E] and dqkv [B, T, 3E] as floats.
struct Out {
  std::vector<float> o, d;
};

Out runPacked(const Case &c, const Inputs &in) {
  DevBuf qkv(bytesOf(in.qkv, c.t)), g(bytesOf(in.g, c.t));
  std::vector<float> nan(in.g.size(), NAN), nan3(in.qkv.size(), NAN);
  DevBuf o(bytesOf(nan, c.t)), d(bytesOf(nan3, c.t));
  TensorRef rq = cpu::makeRef(qkv.p, c.t, {c.b, c.tq, 3 * c.e()}),
            rg = cpu::makeRef(g.p, c.t, {c.b, c.tq, c.e()}),
            ro = cpu::makeRef(o.p, c.t, {c.b, c.tq, c.e()}),
            rd = cpu::makeRef(d.p, c.t, {c.b, c.tq, 3 * c.e()});
  cpu::Attrs a = attrsOf(c);
  std::vector<TensorRef> fin{rq}, fout{ro}, bin{rq, rg}, bout{rd};
  cuda::lookup("graph.packed_attention")(fin, fout, a, nullptr);
  cuda::lookup("graph.packed_attention_backward")(bin, bout, a, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  return {floatsOf(o.get(), c.t), floatsOf(d.get(), c.t)};
}

// Offsets of (b, t, h, x) in qkv's part p, in [B, H, T, D], in [B, T, E].
struct Index {
  const Case &c;
  size_t packed(int p, int64_t b, int64_t t, int64_t h, int64_t x) const {
    return size_t(((b * c.tq + t) * 3 + p) * c.e() + h * c.d + x);
  }
  size_t heads(int64_t b, int64_t t, int64_t h, int64_t x) const {
    return size_t(((b * c.h + h) * c.tq + t) * c.d + x);
  }
  size_t rows(int64_t b, int64_t t, int64_t h, int64_t x) const {
    return size_t(((b * c.tq + t) * c.h + h) * c.d + x);
  }
  template <typename F> void each(F f) const {
    for (int64_t b = 0; b < c.b; ++b)
      for (int64_t t = 0; t < c.tq; ++t)
        for (int64_t h = 0; h < c.h; ++h)
          for (int64_t x = 0; x < c.d; ++x)
            f(b, t, h, x);
  }
};

// The unpacked kernels on the device, moves on the host.
Out runUnpacked(const Case &c, const Inputs &in) {
  Index ix{c};
  size_t n = size_t(c.b * c.tq * c.e());
  std::vector<std::vector<float>> parts(3, std::vector<float>(n));
  std::vector<float> gh(n);
  ix.each([&](int64_t b, int64_t t, int64_t h, int64_t x) {
    for (int p = 0; p < 3; ++p)
      parts[p][ix.heads(b, t, h, x)] = in.qkv[ix.packed(p, b, t, h, x)];
    gh[ix.heads(b, t, h, x)] = in.g[ix.rows(b, t, h, x)];
  });
  std::vector<int64_t> s{c.b, c.h, c.tq, c.d};
  std::vector<float> nan(n, NAN);
  DevBuf q(bytesOf(parts[0], c.t)), k(bytesOf(parts[1], c.t)),
      v(bytesOf(parts[2], c.t)), g(bytesOf(gh, c.t)), o(bytesOf(nan, c.t)),
      dq(bytesOf(nan, c.t)), dk(bytesOf(nan, c.t)), dv(bytesOf(nan, c.t));
  auto ref = [&](DevBuf &buf) { return cpu::makeRef(buf.p, c.t, s); };
  cpu::Attrs a = attrsOf(c);
  std::vector<TensorRef> fin{ref(q), ref(k), ref(v)}, fout{ref(o)};
  cuda::lookup("graph.scaled_dot_product_attention")(fin, fout, a, nullptr);
  std::vector<TensorRef> bin{ref(q), ref(k), ref(v), ref(g)},
      bout{ref(dq), ref(dk), ref(dv)};
  cuda::lookup("graph.scaled_dot_product_attention_backward")(bin, bout, a,
                                                               nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  std::vector<float> oh = floatsOf(o.get(), c.t);
  std::vector<std::vector<float>> dh = {floatsOf(dq.get(), c.t),
                                        floatsOf(dk.get(), c.t),
                                        floatsOf(dv.get(), c.t)};
  Out r{std::vector<float>(n), std::vector<float>(3 * n)};
  ix.each([&](int64_t b, int64_t t, int64_t h, int64_t x) {
    r.o[ix.rows(b, t, h, x)] = oh[ix.heads(b, t, h, x)];
    for (int p = 0; p < 3; ++p)
      r.d[ix.packed(p, b, t, h, x)] = dh[p][ix.heads(b, t, h, x)];
  });
  return r;
}

// The CPU library's packed kernels in FP32 on the rounded values.
Out runCpu(const Case &c, Inputs in) {
  Out r{std::vector<float>(in.g.size()), std::vector<float>(in.qkv.size())};
  TensorRef rq = cpu::makeRef(in.qkv.data(), DType::F32, {c.b, c.tq, 3 * c.e()}),
            rg = cpu::makeRef(in.g.data(), DType::F32, {c.b, c.tq, c.e()}),
            ro = cpu::makeRef(r.o.data(), DType::F32, {c.b, c.tq, c.e()}),
            rd = cpu::makeRef(r.d.data(), DType::F32, {c.b, c.tq, 3 * c.e()});
  cpu::Attrs a = attrsOf(c);
  std::vector<TensorRef> fin{rq}, fout{ro}, bin{rq, rg}, bout{rd};
  cpu::lookup("graph.packed_attention")(fin, fout, a);
  cpu::lookup("graph.packed_attention_backward")(bin, bout, a);
  return r;
}

void expectBitwise(const std::vector<float> &got,
                   const std::vector<float> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(got[i] == want[i]) << what << " at " << i << ": " << got[i]
                                   << " vs " << want[i];
}

// max |got - want| <= tol * max |want|.
void expectClose(const std::vector<float> &got, const std::vector<float> &want,
                 float tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 0.0f;
  for (float w : want)
    scale = std::fmax(scale, std::fabs(w));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(std::fabs(got[i] - want[i]) <= tol * scale)
        << what << " at " << i << ": " << got[i] << " vs " << want[i]
        << " (largest " << scale << ")";
}

float tolerance(DType t) {
  return t == DType::F16 ? 1.0f / 256 : t == DType::BF16 ? 1.0f / 32 : 1e-5f;
}

// The copy path and the math fallback: the unpacked kernels on copies.
void checkCopies(const Case &c) {
  SCOPED_TRACE(name(c));
  Inputs in(c);
  ScopedEnv path("AMPC_CUDA_ATTENTION", "math");
  Out unpacked = runUnpacked(c, in);
  Out copies, fallback;
  {
    ScopedEnv packed("AMPC_CUDA_PACKED_ATTENTION", "copies");
    copies = runPacked(c, in);
  }
  {
    ScopedEnv packed("AMPC_CUDA_PACKED_ATTENTION", nullptr);
    fallback = runPacked(c, in); // strided declines under =math
  }
  expectBitwise(copies.o, unpacked.o, "copies o");
  expectBitwise(copies.d, unpacked.d, "copies dqkv");
  expectBitwise(fallback.o, unpacked.o, "math fallback o");
  expectBitwise(fallback.d, unpacked.d, "math fallback dqkv");
  Out cpu = runCpu(c, in);
  expectClose(copies.o, cpu.o, tolerance(c.t), "copies o vs CPU");
  expectClose(copies.d, cpu.d, tolerance(c.t), "copies dqkv vs CPU");
}

// The strided flash path against unpacked flash and the CPU.
void checkStrided(const Case &c) {
  SCOPED_TRACE(name(c));
  Inputs in(c);
  ScopedEnv path("AMPC_CUDA_ATTENTION", "flash");
  ScopedEnv packed("AMPC_CUDA_PACKED_ATTENTION", nullptr);
  Out strided = runPacked(c, in);
  Out unpacked = runUnpacked(c, in);
  Out cpu = runCpu(c, in);
  float tol = tolerance(c.t);
  expectClose(strided.o, cpu.o, tol, "strided o vs CPU");
  expectClose(strided.d, cpu.d, tol, "strided dqkv vs CPU");
  expectClose(strided.o, unpacked.o, tol, "strided o vs unpacked flash");
  expectClose(strided.d, unpacked.d, tol, "strided dqkv vs unpacked flash");
}

TEST(CudaPackedAttention, CopyPathEqualsUnpacked) {
  REQUIRE_GPU();
  checkCopies({DType::BF16, 2, 64, 4, 64, true});
  checkCopies({DType::F16, 1, 48, 3, 32, false});
  // Shapes whose q, k, v copies stay 256-byte aligned in the copy buffer,
  // so cuBLASLt sees the alignment of the unpacked test buffers.
  checkCopies({DType::F32, 2, 16, 2, 12, true});
}

TEST(CudaPackedAttention, StridedFlashMatchesUnpacked) {
  REQUIRE_GPU();
  if (!cuda::detail::flashCompiled())
    GTEST_SKIP() << "built without the cuDNN frontend";
  checkStrided({DType::BF16, 2, 64, 4, 64, true});
  checkStrided({DType::BF16, 2, 128, 12, 64, true}); // GPT-2's head layout
  checkStrided({DType::F16, 1, 48, 3, 32, false});
}

// f32 cannot take the strided flash path: forced flash is an error before
// any device work, so this runs without a GPU too.
TEST(CudaPackedAttention, ForcedFlashRejectsF32) {
  TensorRef qkv = cpu::makeRef(nullptr, DType::F32, {1, 4, 48}),
            o = cpu::makeRef(nullptr, DType::F32, {1, 4, 16});
  ScopedEnv path("AMPC_CUDA_ATTENTION", "flash");
  EXPECT_THROW(cuda::detail::flashPackedForward(qkv, o, 2, 0.5f, true, nullptr,
                                                "packed_attention"),
               std::invalid_argument);
  path.set("math");
  EXPECT_FALSE(cuda::detail::flashPackedForward(qkv, o, 2, 0.5f, true, nullptr,
                                                "packed_attention"));
}

} // namespace
