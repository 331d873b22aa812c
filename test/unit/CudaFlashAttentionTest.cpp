//===- CudaFlashAttentionTest.cpp - cuDNN flash attention vs the math path -===//
//
// scaled_dot_product_attention and its backward in f16/bf16 three ways: the
// CPU library in FP32 on the same (rounded) inputs, the CUDA math path
// (AMPC_CUDA_ATTENTION=math) and cuDNN's flash path (=flash, so a call that
// silently fell back would fail). The rule tests run everywhere; the rest
// needs a CUDA device and a build with the cuDNN frontend, and skips
// otherwise.
//
// Tolerances, as a fraction of the reference's largest magnitude: both GPU
// paths round P (and the math path dS) to the io type before their second
// GEMMs and round each result once, so they sit a few units of roundoff of
// the io type from the FP32 reference: 2^-5 for bf16 (8-bit significand,
// unit roundoff 2^-8, so 8 units), 2^-8 for f16 (unit roundoff 2^-11).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/FlashAttention.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/AttentionPath.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;
using namespace ampc::cudatest;

namespace {

#define REQUIRE_FLASH()                                                        \
  REQUIRE_GPU();                                                               \
  if (!cuda::detail::flashCompiled())                                          \
  GTEST_SKIP() << "built without the cuDNN frontend"

// Sets AMPC_CUDA_ATTENTION for a scope (null: unset), then restores it.
struct PathEnv : ScopedEnv {
  explicit PathEnv(const char *v) : ScopedEnv("AMPC_CUDA_ATTENTION", v) {}
};

// A half tensor: its values (exactly representable, as floats) and a device
// copy; results (seed 0) start as NaN so an element nobody writes fails.
struct Half {
  DType t;
  std::vector<int64_t> shape;
  std::vector<float> values;
  DevBuf dev;
  Half(DType type, std::vector<int64_t> s, unsigned seed)
      : t(type), shape(s), values(rounded(t, numel(shape), seed)),
        dev(bytesOf(values, t)) {}
  static size_t numel(const std::vector<int64_t> &shape) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    return n;
  }
  // Normal samples (seed > 0) or NaN, rounded to |t|.
  static std::vector<float> rounded(DType t, size_t n, unsigned seed) {
    std::vector<float> v = seed ? randoms(n, 1.0f, seed)
                                : std::vector<float>(n, NAN);
    return floatsOf(bytesOf(v, t), t);
  }
  TensorRef ref() const { return cpu::makeRef(dev.p, t, shape); }
  TensorRef host() { return cpu::makeRef(values.data(), DType::F32, shape); }
  std::vector<float> get() const { return floatsOf(dev.get(), t); }
};

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

struct Case {
  DType t;
  int64_t b, hq, hkv, tq, s, d, e;
  bool causal;
  double scale; // 0: the default 1/sqrt(d)
};

std::string name(const Case &c) {
  return std::string(c.t == DType::F16 ? "f16" : "bf16") + " B" +
         std::to_string(c.b) + " Hq" + std::to_string(c.hq) + " Hkv" +
         std::to_string(c.hkv) + " T" + std::to_string(c.tq) + " S" +
         std::to_string(c.s) + " D" + std::to_string(c.d) + " E" +
         std::to_string(c.e) + (c.causal ? " causal" : "");
}

// The results of one path: o, dq, dk, dv.
using Results = std::vector<std::vector<float>>;

Results runGpu(const Case &c, Half &q, Half &k, Half &v, Half &g) {
  cpu::Attrs attrs{{"causal", c.causal}};
  if (c.scale)
    attrs = {{"causal", c.causal}, {"scale", c.scale}};
  Half o(c.t, {c.b, c.hq, c.tq, c.e}, 0), dq(c.t, q.shape, 0),
      dk(c.t, k.shape, 0), dv(c.t, v.shape, 0);
  std::vector<TensorRef> fin = {q.ref(), k.ref(), v.ref()}, fout = {o.ref()};
  cuda::lookup("graph.scaled_dot_product_attention")(fin, fout, attrs,
                                                      nullptr);
  std::vector<TensorRef> bin = {q.ref(), k.ref(), v.ref(), g.ref()},
                         bout = {dq.ref(), dk.ref(), dv.ref()};
  cuda::lookup("graph.scaled_dot_product_attention_backward")(bin, bout, attrs,
                                                               nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  return {o.get(), dq.get(), dk.get(), dv.get()};
}

void compareAll(const Case &c) {
  SCOPED_TRACE(name(c));
  Half q(c.t, {c.b, c.hq, c.tq, c.d}, 1), k(c.t, {c.b, c.hkv, c.s, c.d}, 2),
      v(c.t, {c.b, c.hkv, c.s, c.e}, 3), g(c.t, {c.b, c.hq, c.tq, c.e}, 4);
  cpu::Attrs attrs{{"causal", c.causal}};
  if (c.scale)
    attrs = {{"causal", c.causal}, {"scale", c.scale}};
  // The CPU library in FP32 on the rounded values.
  Results want(4);
  want[0].resize(size_t(c.b * c.hq * c.tq * c.e));
  want[1].resize(q.values.size());
  want[2].resize(k.values.size());
  want[3].resize(v.values.size());
  std::vector<TensorRef> cin = {q.host(), k.host(), v.host()};
  std::vector<TensorRef> cout = {
      cpu::makeRef(want[0].data(), DType::F32, {c.b, c.hq, c.tq, c.e})};
  cpu::lookup("graph.scaled_dot_product_attention")(cin, cout, attrs);
  cin.push_back(g.host());
  cout = {cpu::makeRef(want[1].data(), DType::F32, q.shape),
          cpu::makeRef(want[2].data(), DType::F32, k.shape),
          cpu::makeRef(want[3].data(), DType::F32, v.shape)};
  cpu::lookup("graph.scaled_dot_product_attention_backward")(cin, cout, attrs);

  Results math, flash;
  {
    PathEnv env("math");
    math = runGpu(c, q, k, v, g);
  }
  {
    PathEnv env("flash");
    flash = runGpu(c, q, k, v, g);
  }
  float tol = c.t == DType::F16 ? 1.0f / 256 : 1.0f / 32;
  const char *names[] = {"o", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    expectClose(math[i], want[i], tol, std::string("math ") + names[i]);
    expectClose(flash[i], want[i], tol, std::string("flash ") + names[i]);
    expectClose(flash[i], math[i], tol, std::string("flash vs math ") + names[i]);
  }
}

// The shared rule (runtime/kernels/AttentionPath.h), exactly.
TEST(FlashAttentionRule, EligibleCalls) {
  using kernels::flashAttentionEligible;
  EXPECT_TRUE(flashAttentionEligible(DType::BF16, {DType::BF16}, 64, 64, false));
  EXPECT_TRUE(flashAttentionEligible(DType::F16, {DType::F16, DType::F16}, 8, 128,
                                     false));
  EXPECT_FALSE(flashAttentionEligible(DType::F32, {DType::F32}, 64, 64, false));
  EXPECT_FALSE(flashAttentionEligible(DType::BF16, {DType::F16}, 64, 64, false));
  EXPECT_FALSE(flashAttentionEligible(DType::BF16, {DType::F32}, 64, 64, false));
  EXPECT_FALSE(flashAttentionEligible(DType::BF16, {}, 64, 64, true));
  EXPECT_FALSE(flashAttentionEligible(DType::BF16, {}, 12, 64, false));
  EXPECT_FALSE(flashAttentionEligible(DType::BF16, {}, 64, 136, false));
  EXPECT_FALSE(flashAttentionEligible(DType::BF16, {}, 0, 64, false));
}

// AMPC_CUDA_ATTENTION=flash makes an ineligible call an error, before any
// device work (so this runs without a GPU too); "math" and the default
// decline quietly.
TEST(FlashAttentionRule, ForcedFlashRejectsIneligibleCalls) {
  TensorRef q = cpu::makeRef(nullptr, DType::F32, {1, 2, 4, 8}),
            o = cpu::makeRef(nullptr, DType::F32, {1, 2, 4, 8});
  {
    PathEnv env("flash");
    EXPECT_THROW(cuda::detail::flashForward(q, q, q, o, 0.5f, true, false,
                                            nullptr, "attention"),
                 std::invalid_argument);
  }
  {
    PathEnv env("math");
    EXPECT_FALSE(cuda::detail::flashForward(q, q, q, o, 0.5f, true, false,
                                            nullptr, "attention"));
  }
  PathEnv env(nullptr);
  EXPECT_EQ(cuda::detail::attentionPath(), cuda::detail::AttentionPath::Auto);
  EXPECT_FALSE(cuda::detail::flashForward(q, q, q, o, 0.5f, true, false,
                                          nullptr, "attention"));
}

TEST(CudaFlashAttention, Bf16Causal) {
  REQUIRE_FLASH();
  compareAll({DType::BF16, 2, 4, 4, 64, 64, 64, 64, true, 0});
}

// The non-deterministic backward (AMPC_CUDA_ATTENTION_BACKWARD=fast, dQ
// summed with atomics) against the math path too.
TEST(CudaFlashAttention, Bf16CausalFastBackward) {
  REQUIRE_FLASH();
  ScopedEnv fast("AMPC_CUDA_ATTENTION_BACKWARD", "fast");
  compareAll({DType::BF16, 2, 4, 4, 64, 64, 64, 64, true, 0});
}

TEST(CudaFlashAttention, F16NoMaskUnequalLengths) {
  REQUIRE_FLASH();
  compareAll({DType::F16, 1, 2, 2, 48, 80, 32, 32, false, 0.3});
}

// Grouped-query attention: 4 query heads on 2 kv heads (dk, dv summed over
// the two query heads each kv head serves).
TEST(CudaFlashAttention, GroupedQueryCausal) {
  REQUIRE_FLASH();
  compareAll({DType::BF16, 2, 4, 2, 64, 64, 64, 64, true, 0});
  compareAll({DType::F16, 1, 4, 1, 32, 32, 16, 16, true, 0});
}

// Causal with fewer queries than keys: ours is top-left aligned (query i
// sees keys 0..i), which cuDNN's set_causal_mask must match. If this cuDNN
// does not support the shape, the forced flash path says so.
TEST(CudaFlashAttention, CausalTopLeftWithMoreKeys) {
  REQUIRE_FLASH();
  try {
    compareAll({DType::BF16, 1, 2, 2, 32, 64, 64, 64, true, 0});
  } catch (const std::invalid_argument &e) {
    if (std::string(e.what()).find("cuDNN:") == std::string::npos)
      throw;
    GTEST_SKIP() << e.what();
  }
}

} // namespace
