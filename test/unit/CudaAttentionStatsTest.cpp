//===- CudaAttentionStatsTest.cpp - saved attention statistics on the device ===//
//
// graph.packed_attention_stats and its backward on the CUDA library:
// - the forward's result equals packed_attention's (the same cuDNN graph
//   plus the statistics output), its statistics the log-sum-exp of each row
//   (runtime/kernels/AttentionStats.h on the host, FP64, within 1e-3:
//   cuDNN sums in FP32);
// - the backward reading the saved o and statistics gives bitwise the
//   d(qkv) of packed_attention_backward, which recomputes them with the
//   same cuDNN forward-with-statistics plan (the same inputs to the same
//   deterministic backward plan), and of the same op with
//   AMPC_CUDA_ATTENTION_STATS=recompute;
// - under AMPC_CUDA_ATTENTION=math both ops are packed_attention's copy
//   path (the backward ignores the unwritten statistics): bitwise equal.
// The same for scaled_dot_product_attention_stats and its backward.
// Skips without a GPU (and the flash cases without the cuDNN frontend).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/FlashAttention.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/AttentionStats.h"
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

cpu::Attrs attrsOf(const Case &c) {
  cpu::Attrs a{{"heads", c.h}};
  if (c.causal)
    a.set("causal", true);
  return a;
}

struct Result {
  std::vector<float> o, stats, d;
};

// packed_attention_stats then its backward (|saved|), or packed_attention
// then packed_attention_backward; the statistics stay NaN in the latter.
Result run(const Case &c, const std::vector<float> &qkvH,
           const std::vector<float> &gH, bool saved) {
  DevBuf qkv(bytesOf(qkvH, c.t)), g(bytesOf(gH, c.t));
  std::vector<float> nanO(gH.size(), NAN), nanD(qkvH.size(), NAN),
      nanS(size_t(c.b * c.h * c.tq), NAN);
  DevBuf o(bytesOf(nanO, c.t)), d(bytesOf(nanD, c.t)),
      s(bytesOf(nanS, DType::F32));
  TensorRef rq = cpu::makeRef(qkv.p, c.t, {c.b, c.tq, 3 * c.e()}),
            rg = cpu::makeRef(g.p, c.t, {c.b, c.tq, c.e()}),
            ro = cpu::makeRef(o.p, c.t, {c.b, c.tq, c.e()}),
            rs = cpu::makeRef(s.p, DType::F32, {c.b, c.h, c.tq}),
            rd = cpu::makeRef(d.p, c.t, {c.b, c.tq, 3 * c.e()});
  cpu::Attrs a = attrsOf(c);
  if (saved) {
    std::vector<TensorRef> fin{rq}, fout{ro, rs}, bin{rq, ro, rs, rg},
        bout{rd};
    cuda::lookup("graph.packed_attention_stats")(fin, fout, a, nullptr);
    cuda::lookup("graph.packed_attention_stats_backward")(bin, bout, a,
                                                          nullptr);
  } else {
    std::vector<TensorRef> fin{rq}, fout{ro}, bin{rq, rg}, bout{rd};
    cuda::lookup("graph.packed_attention")(fin, fout, a, nullptr);
    cuda::lookup("graph.packed_attention_backward")(bin, bout, a, nullptr);
  }
  cuda::check(cudaDeviceSynchronize(), "sync");
  return {floatsOf(o.get(), c.t), floatsOf(s.get(), DType::F32),
          floatsOf(d.get(), c.t)};
}

void expectBitwise(const std::vector<float> &got,
                   const std::vector<float> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(got[i] == want[i]) << what << " at " << i << ": " << got[i]
                                   << " vs " << want[i];
}

// o of the forward with statistics against o of the one without: two cuDNN
// plans, which the heuristics may give different engines (tile sizes, so
// summation orders), so within one unit in the last place of the half
// type rather than bitwise. The backward passes compare bitwise: they run
// the same plan on the same inputs.
void expectWithinUlp(const std::vector<float> &got,
                     const std::vector<float> &want, DType t,
                     const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double rel = t == DType::BF16 ? 0x1p-7 : 0x1p-10;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(double(got[i]) - want[i]),
              rel * std::fabs(double(want[i])) + 1e-6)
        << what << " at " << i << ": " << got[i] << " vs " << want[i];
}

struct Inputs {
  std::vector<float> qkv, g;
  explicit Inputs(const Case &c)
      : qkv(floatsOf(bytesOf(randoms(size_t(c.b * c.tq * 3 * c.e()), 1.0f, 5),
                             c.t),
                     c.t)),
        g(floatsOf(bytesOf(randoms(size_t(c.b * c.tq * c.e()), 1.0f, 6), c.t),
                   c.t)) {}
};

void checkFlash(const Case &c) {
  SCOPED_TRACE("B" + std::to_string(c.b) + " T" + std::to_string(c.tq) +
               " H" + std::to_string(c.h) + " D" + std::to_string(c.d));
  Inputs in(c);
  ScopedEnv path("AMPC_CUDA_ATTENTION", "flash");
  ScopedEnv packed("AMPC_CUDA_PACKED_ATTENTION", nullptr);
  ScopedEnv stats("AMPC_CUDA_ATTENTION_STATS", nullptr);
  Result saved = run(c, in.qkv, in.g, true);
  Result recompute = run(c, in.qkv, in.g, false);
  stats.set("recompute");
  Result switched = run(c, in.qkv, in.g, true);
  expectWithinUlp(saved.o, recompute.o, c.t, "o");
  expectBitwise(saved.d, recompute.d, "dqkv saved vs recomputed");
  expectBitwise(switched.d, recompute.d, "dqkv AMPC_CUDA_ATTENTION_STATS");
  std::vector<double> want(saved.stats.size());
  double scale = 1.0 / std::sqrt(double(c.d));
  kernels::detail::packedLogSumExp(in.qkv.data(), c.b, c.tq, c.h, c.d, scale,
                                   c.causal, want.data());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(saved.stats[i], want[i], 1e-3) << "stats at " << i;
}

TEST(CudaAttentionStats, SavedBackwardEqualsRecompute) {
  REQUIRE_GPU();
  if (!cuda::detail::flashCompiled())
    GTEST_SKIP() << "built without the cuDNN frontend";
  checkFlash({DType::BF16, 2, 64, 4, 64, true});
  checkFlash({DType::BF16, 2, 128, 12, 64, true}); // GPT-2's head layout
  checkFlash({DType::F16, 1, 48, 3, 32, false});
}

// The math path: the forward leaves the statistics alone, the backward is
// packed_attention_backward's copy path.
TEST(CudaAttentionStats, MathPathEqualsPacked) {
  REQUIRE_GPU();
  Case c{DType::BF16, 2, 64, 4, 64, true};
  Inputs in(c);
  ScopedEnv path("AMPC_CUDA_ATTENTION", "math");
  Result saved = run(c, in.qkv, in.g, true);
  Result packed = run(c, in.qkv, in.g, false);
  expectBitwise(saved.o, packed.o, "o");
  expectBitwise(saved.d, packed.d, "dqkv");
}

// scaled_dot_product_attention_stats and its backward on separate q, k, v
// (grouped-query: hq query heads on hkv kv heads): the same guarantees.
struct SdpaCase {
  DType t;
  int64_t b, hq, hkv, tq, d;
  bool causal;
};

struct SdpaResult {
  std::vector<float> o, stats, dq, dk, dv;
};

// The stats op then its backward (|saved|), or the attention and its
// backward.
SdpaResult runSdpa(const SdpaCase &c, bool saved) {
  size_t nq = size_t(c.b * c.hq * c.tq * c.d), nk = size_t(c.b * c.hkv * c.tq * c.d);
  std::vector<float> qH = randoms(nq, 1.0f, 7), kH = randoms(nk, 1.0f, 8),
                     vH = randoms(nk, 1.0f, 9), gH = randoms(nq, 1.0f, 10);
  DevBuf q(bytesOf(qH, c.t)), k(bytesOf(kH, c.t)), v(bytesOf(vH, c.t)),
      g(bytesOf(gH, c.t));
  std::vector<float> nanQ(nq, NAN), nanK(nk, NAN),
      nanS(size_t(c.b * c.hq * c.tq), NAN);
  DevBuf o(bytesOf(nanQ, c.t)), dq(bytesOf(nanQ, c.t)), dk(bytesOf(nanK, c.t)),
      dv(bytesOf(nanK, c.t)), st(bytesOf(nanS, DType::F32));
  std::vector<int64_t> qs{c.b, c.hq, c.tq, c.d}, ks{c.b, c.hkv, c.tq, c.d};
  TensorRef rq = cpu::makeRef(q.p, c.t, qs), rk = cpu::makeRef(k.p, c.t, ks),
            rv = cpu::makeRef(v.p, c.t, ks), rg = cpu::makeRef(g.p, c.t, qs),
            ro = cpu::makeRef(o.p, c.t, qs),
            rs = cpu::makeRef(st.p, DType::F32, {c.b, c.hq, c.tq}),
            rdq = cpu::makeRef(dq.p, c.t, qs), rdk = cpu::makeRef(dk.p, c.t, ks),
            rdv = cpu::makeRef(dv.p, c.t, ks);
  cpu::Attrs a;
  if (c.causal)
    a.set("causal", true);
  std::vector<TensorRef> grads{rdq, rdk, rdv};
  if (saved) {
    std::vector<TensorRef> fin{rq, rk, rv}, fout{ro, rs},
        bin{rq, rk, rv, ro, rs, rg};
    cuda::lookup("graph.scaled_dot_product_attention_stats")(fin, fout, a,
                                                             nullptr);
    cuda::lookup("graph.scaled_dot_product_attention_stats_backward")(
        bin, grads, a, nullptr);
  } else {
    std::vector<TensorRef> fin{rq, rk, rv}, fout{ro}, bin{rq, rk, rv, rg};
    cuda::lookup("graph.scaled_dot_product_attention")(fin, fout, a, nullptr);
    cuda::lookup("graph.scaled_dot_product_attention_backward")(bin, grads, a,
                                                                nullptr);
  }
  cuda::check(cudaDeviceSynchronize(), "sync");
  SdpaResult r{floatsOf(o.get(), c.t), floatsOf(st.get(), DType::F32),
               floatsOf(dq.get(), c.t), floatsOf(dk.get(), c.t),
               floatsOf(dv.get(), c.t)};
  if (saved) { // the statistics against the FP64 reference
    std::vector<float> qr = floatsOf(bytesOf(qH, c.t), c.t),
                       kr = floatsOf(bytesOf(kH, c.t), c.t);
    std::vector<double> want(r.stats.size());
    kernels::detail::attentionLogSumExp(qr.data(), kr.data(), c.b, c.hq, c.hkv,
                                        c.tq, c.tq, c.d,
                                        1.0 / std::sqrt(double(c.d)), c.causal,
                                        want.data());
    if (cuda::detail::attentionPath() != cuda::detail::AttentionPath::Math)
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(r.stats[i], want[i], 1e-3) << "stats at " << i;
  }
  return r;
}

// |flash|: o came from two cuDNN plans (expectWithinUlp), else bitwise.
void expectSameSdpa(const SdpaResult &a, const SdpaResult &b,
                    const std::string &what, const DType *flash = nullptr) {
  if (flash)
    expectWithinUlp(a.o, b.o, *flash, what + " o");
  else
    expectBitwise(a.o, b.o, what + " o");
  expectBitwise(a.dq, b.dq, what + " dq");
  expectBitwise(a.dk, b.dk, what + " dk");
  expectBitwise(a.dv, b.dv, what + " dv");
}

TEST(CudaAttentionStats, SdpaSavedBackwardEqualsRecompute) {
  REQUIRE_GPU();
  if (!cuda::detail::flashCompiled())
    GTEST_SKIP() << "built without the cuDNN frontend";
  ScopedEnv path("AMPC_CUDA_ATTENTION", "flash");
  ScopedEnv stats("AMPC_CUDA_ATTENTION_STATS", nullptr);
  for (SdpaCase c : {SdpaCase{DType::BF16, 2, 8, 2, 64, 64, true},
                     SdpaCase{DType::F16, 1, 4, 4, 48, 32, false}}) {
    SCOPED_TRACE("Hq" + std::to_string(c.hq) + " Hkv" + std::to_string(c.hkv));
    stats.set(nullptr);
    SdpaResult saved = runSdpa(c, true), plain = runSdpa(c, false);
    expectSameSdpa(saved, plain, "saved vs recomputed:", &c.t);
    stats.set("recompute");
    expectSameSdpa(runSdpa(c, true), plain, "AMPC_CUDA_ATTENTION_STATS:",
                   &c.t);
  }
}

TEST(CudaAttentionStats, SdpaMathPathEqualsAttention) {
  REQUIRE_GPU();
  ScopedEnv path("AMPC_CUDA_ATTENTION", "math");
  SdpaCase c{DType::BF16, 2, 4, 2, 32, 64, true};
  expectSameSdpa(runSdpa(c, true), runSdpa(c, false), "math path:");
}

} // namespace
