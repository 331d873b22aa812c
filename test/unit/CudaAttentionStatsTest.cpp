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
  expectBitwise(saved.o, recompute.o, "o");
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

} // namespace
