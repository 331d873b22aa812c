//===- HostModelTest.cpp - The fixed half of a generated CPU model --------===//
//
// A model written the way the CPU emitter prints one: a HostModel subclass
// with only the two bodies. Its "network" is trivial (the gradient of each
// parameter is the input times the loss scale) so the tests see the base's
// storage, accumulation, epilogue and state directly.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/HostModel.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace ampc::cpu {
namespace {

rt::ModelSpec specOf(const std::string &optimizer,
                     const std::string &lossScale) {
  rt::ModelSpec s;
  s.name = "tiny";
  s.inputs = {{"x", rt::DType::F32, {6}}};
  s.outputs = {{"loss", rt::DType::F32, {}}};
  s.params = {
      rt::makeParam("w", {2, 3}, num::InitAttrs{.kind = "normal", .std = 0.5}),
      rt::makeParam("b", {3}, num::InitAttrs{.kind = "ones"})};
  s.config.optimizer = optimizer;
  s.config.lossScale = lossScale;
  s.config.clipNorm = true;
  s.defaults.lr = 0.25f;
  s.arenaBytes = 100;
  s.arenaBytesNoReuse = 300;
  return s;
}

class Tiny final : public HostModel {
public:
  explicit Tiny(const std::string &optimizer = "adamw",
                const std::string &lossScale = "dynamic")
      : HostModel(specOf(optimizer, lossScale)) {}
  explicit Tiny(rt::ModelSpec spec) : HostModel(std::move(spec)) {}

  // What the bodies saw, for the tests.
  uint64_t seenSeed = 0;
  int64_t seenIteration = -1, seenShard = -1;
  std::byte *seenArena = nullptr;
  // With half weight copies: the bits of w's copy the body read (with the
  // zero padding after it, if any), and whether b had one.
  std::vector<uint16_t> seenHalf;
  bool bHasCopy = false;

private:
  // loss = x[0]; d loss / d w = x[0..6), d loss / d b = x[0..3), times the
  // loss scale (as generated code receives it).
  void runForwardBackward(const void *const *inputs, int micro) override {
    const float *x = static_cast<const float *>(inputs[0]);
    seenSeed = seed();
    seenIteration = iteration();
    seenShard = shard();
    seenArena = arena();
    if (const auto *h = static_cast<const uint16_t *>(halfWeight(0)))
      seenHalf.assign(h, h + 6 + params()[0].halfPadding);
    bHasCopy = halfWeight(1) != nullptr;
    std::memset(arena(), 0xff, size_t(arenaBytes())); // all of it is ours
    float g[6];
    for (int i = 0; i < 6; ++i)
      g[i] = x[i] * lossScale();
    addLoss(x[0]);
    storeGrad(0, g, micro);
    storeGrad(1, g, micro);
  }
  void runEvaluate(const void *const *, void *const *outputs) override {
    float sum = 0;
    for (int p = 0; p < 2; ++p)
      for (int i = 0; i < (p == 0 ? 6 : 3); ++i)
        sum += weight(p)[i];
    std::memcpy(outputs[0], &sum, sizeof sum);
  }
};

TEST(HostModel, MetadataComesFromTheSpec) {
  Tiny m;
  EXPECT_EQ(m.name(), "tiny");
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].shape, std::vector<int64_t>{6});
  ASSERT_EQ(m.params().size(), 2u);
  EXPECT_EQ(m.params()[0].name, "w");
  EXPECT_EQ(m.params()[1].shape, std::vector<int64_t>{3});
  EXPECT_EQ(m.outputs()[0].name, "loss");
  EXPECT_EQ(m.config().optimizer, "adamw");
  EXPECT_EQ(m.defaults().lr, 0.25f);
  EXPECT_EQ(m.arenaBytes(), 100);
  EXPECT_EQ(m.computeStream(), nullptr);
}

// One block in reverse parameter order, the order DataParallel buckets the
// gradients: b's 3 floats, then w's 6, so a bucket of both is one range
// that MPI reduces in place (no staging copies).
TEST(HostModel, GradientsLieInTheBucketOrder) {
  Tiny m;
  EXPECT_EQ(m.grad(0), m.grad(1) + 3);
}

TEST(HostModel, InitializeFillsMastersAndResetsState) {
  Tiny m;
  rt::Hyper h;
  h.initScale = 128.0f;
  h.hysteresis = 3;
  m.optimizerStep() = 9;
  m.scaler().skippedSteps = 4;
  m.initialize(42, h);
  std::vector<float> want(6);
  num::fillInit(m.params()[0].init, 42, num::streamId("w"), want);
  std::vector<rt::StateTensor> st = m.stateTensors();
  ASSERT_EQ(st.size(), 6u);
  EXPECT_EQ(std::vector<float>(st[0].data, st[0].data + 6), want);
  EXPECT_EQ(std::vector<float>(st[3].data, st[3].data + 3),
            std::vector<float>(3, 1.0f));
  EXPECT_EQ(m.scaler().scale, 128.0f);
  EXPECT_EQ(m.scaler().hysteresisLeft, 3);
  EXPECT_EQ(m.scaler().skippedSteps, 0);
  EXPECT_EQ(m.optimizerStep(), 0);
  EXPECT_EQ(*m.lossAccumulator(), 0.0f);

  Tiny unscaled("adamw", "none");
  unscaled.initialize(42, h);
  EXPECT_EQ(unscaled.scaler().scale, 1.0f); // no loss scaling
}

TEST(HostModel, StateTensorsFollowTheOptimizer) {
  Tiny adam, sgd("sgd", "static");
  std::vector<std::string> names;
  for (const rt::StateTensor &t : adam.stateTensors())
    names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"w", "w.exp_avg", "w.exp_avg_sq",
                                             "b", "b.exp_avg",
                                             "b.exp_avg_sq"}));
  names.clear();
  for (const rt::StateTensor &t : sgd.stateTensors())
    names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"w", "w.momentum_buffer", "b",
                                             "b.momentum_buffer"}));
  EXPECT_EQ(sgd.stateTensors()[2].shape, std::vector<int64_t>{3});
  // Moments go to optimizer.safetensors; parameters are shared by all ranks.
  for (const rt::StateTensor &t : adam.stateTensors()) {
    EXPECT_EQ(t.optimizer, t.name.find('.') != std::string::npos) << t.name;
    EXPECT_FALSE(t.perRank) << t.name;
  }
}

TEST(HostModel, MicroBatchesWriteThenAccumulate) {
  Tiny m;
  rt::Hyper h;
  h.initScale = 4.0f;
  m.initialize(1, h);
  m.setDataShard(3, 4);
  m.beginStep(17);
  float x1[6] = {1, 2, 3, 4, 5, 6}, x2[6] = {0.5f, 0, 0, 0, 0, -1};
  const void *in1[] = {x1}, *in2[] = {x2};
  m.forwardBackward(in1, 0);
  EXPECT_EQ(m.seenSeed, 1u);
  EXPECT_EQ(m.seenIteration, 17);
  EXPECT_EQ(m.seenShard, 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.seenArena) % 64, 0u);
  EXPECT_EQ(m.grad(0)[5], 24.0f);
  m.forwardBackward(in2, 1);
  EXPECT_EQ(m.grad(0)[0], 4.0f + 2.0f);
  EXPECT_EQ(m.grad(0)[5], 24.0f - 4.0f);
  EXPECT_EQ(m.grad(1)[0], 6.0f);
  EXPECT_EQ(m.grad(1)[2], 12.0f);
  EXPECT_EQ(*m.lossAccumulator(), 1.5f);
  // A new step's first micro-batch overwrites.
  m.forwardBackward(in2, 0);
  EXPECT_EQ(m.grad(0)[0], 2.0f);
}

// step() is cpu::Epilogue on the model's tensors and state.
TEST(HostModel, StepRunsTheEpilogue) {
  Tiny m;
  rt::Hyper h = m.defaults();
  h.initScale = 4.0f;
  h.clipNorm = 0.1f;
  m.initialize(7, h);
  std::vector<rt::StateTensor> st = m.stateTensors();
  std::vector<float> w(st[0].data, st[0].data + 6),
      b(st[3].data, st[3].data + 3);
  float x[6] = {1, -2, 3, -4, 5, -6};
  const void *in[] = {x};
  m.forwardBackward(in, 0);
  m.forwardBackward(in, 1);

  // The same step by hand: the class on copies of the tensors.
  std::vector<float> gw(m.grad(0), m.grad(0) + 6), gb(m.grad(1), m.grad(1) + 3);
  std::vector<float> mw(6), vw(6), mb(3), vb(3);
  Epilogue ref({{gw.data(), w.data(), mw.data(), vw.data(), 6},
                {gb.data(), b.data(), mb.data(), vb.data(), 3}},
               EpilogueConfig::fromCompileConfig(m.config()));
  HostState rs;
  rs.scaler = m.scaler();
  rs.lossAccumulator = *m.lossAccumulator();
  rt::StepStats want = ref.run(rs, h, 2.0f);

  rt::StepStats got = m.step(h, 2.0f);
  EXPECT_EQ(got.loss, 1.0f);
  EXPECT_EQ(got.loss, want.loss);
  EXPECT_EQ(got.gradNorm, want.gradNorm);
  EXPECT_EQ(got.clipCoef, want.clipCoef);
  EXPECT_LT(got.clipCoef, 1.0f);
  EXPECT_EQ(m.optimizerStep(), 1);
  EXPECT_EQ(*m.lossAccumulator(), 0.0f);
  EXPECT_EQ(std::vector<float>(st[0].data, st[0].data + 6), w);
  EXPECT_EQ(std::vector<float>(st[4].data, st[4].data + 3), mb);
  EXPECT_EQ(std::vector<float>(st[5].data, st[5].data + 3), vb);

  float out = 0;
  void *outs[] = {&out};
  m.evaluate(in, outs);
  float sum = 0;
  for (float v : w)
    sum += v;
  for (float v : b)
    sum += v;
  EXPECT_EQ(out, sum);
}

// Tiny whose step reads a bf16 copy of "w" (train-half-weight-copies),
// followed by |padding| zeros (graph-pad-classes); "b" has none.
rt::ModelSpec halfSpec(int64_t padding = 0) {
  rt::ModelSpec s = specOf("adamw", "dynamic");
  s.config.amp = "bf16";
  s.params[0].halfCopy = true;
  s.params[0].halfPadding = padding;
  return s;
}

// The bf16 bits of w[0..n), then |padding| zeros.
std::vector<uint16_t> bf16Bits(const float *w, int n, int64_t padding = 0) {
  std::vector<uint16_t> bits;
  for (int i = 0; i < n; ++i)
    bits.push_back(num::bf16(w[i]).bits);
  bits.resize(size_t(n + padding), 0);
  return bits;
}

// The copy the step reads is the bf16 rounding of the master it would have
// cast: after initialize, after each applied step (the epilogue writes it),
// unchanged by a skipped step, and recast after the masters were written
// through stateTensors() (a resume). With zero padding after the copy
// (the parameter), the padding stays zero through all of it.
class HalfCopies : public testing::TestWithParam<int64_t> {};

TEST_P(HalfCopies, FollowTheMasters) {
  int64_t pad = GetParam();
  Tiny m(halfSpec(pad));
  rt::Hyper h = m.defaults();
  m.initialize(3, h);
  // Taken before the first step: later calls would make the next step
  // recast the copies, hiding whether the epilogue wrote them.
  std::vector<rt::StateTensor> st = m.stateTensors();
  const float *w = st[0].data;
  float x[6] = {0.5f, -1, 1.5f, -2, 2.5f, -3};
  const void *in[] = {x};
  m.forwardBackward(in, 0);
  EXPECT_EQ(m.seenHalf, bf16Bits(w, 6, pad));
  EXPECT_FALSE(m.bHasCopy);

  std::vector<uint16_t> before = bf16Bits(w, 6, pad);
  ASSERT_EQ(m.step(h, 1.0f).skipped, 0);
  m.forwardBackward(in, 0);
  EXPECT_EQ(m.seenHalf, bf16Bits(w, 6, pad));
  EXPECT_NE(m.seenHalf, before); // lr 0.25 moved every weight

  // An overflowing step changes neither the masters nor the copy.
  std::vector<uint16_t> kept = m.seenHalf;
  float bad[6] = {1, 1, 1, 1, 1, INFINITY};
  const void *inBad[] = {bad};
  m.forwardBackward(inBad, 0);
  ASSERT_EQ(m.step(h, 1.0f).skipped, 1);
  m.forwardBackward(in, 0);
  EXPECT_EQ(m.seenHalf, kept);

  // A resume writes the masters through the state tensors.
  st = m.stateTensors();
  for (int i = 0; i < 6; ++i)
    st[0].data[i] = 1.0f + float(i) / 3.0f;
  m.forwardBackward(in, 0);
  EXPECT_EQ(m.seenHalf, bf16Bits(st[0].data, 6, pad));
}

INSTANTIATE_TEST_SUITE_P(HostModel, HalfCopies, testing::Values(0, 5));

// Gradients the step returns in half (rt::ParamInfo::gradType,
// train-half-grads): w's in f16, written in place into halfGrad(0) as
// generated code does on micro-batch 0, b's in bf16 from the arena. The
// model widens them into grad() (micro-batch 0) and adds them (micro-batch
// 1), exactly: grad() holds what the casts to FP32 gave.
class HalfGrads final : public HostModel {
public:
  HalfGrads() : HostModel(spec()) {}
  static rt::ModelSpec spec() {
    rt::ModelSpec s = specOf("sgd", "none");
    s.config.amp = "fp16";
    s.config.accumSteps = 2;
    s.params[0].gradType = rt::DType::F16;
    s.params[1].gradType = rt::DType::BF16;
    return s;
  }

private:
  void runForwardBackward(const void *const *inputs, int micro) override {
    const float *x = static_cast<const float *>(inputs[0]);
    auto *w = micro == 0 ? static_cast<num::half *>(halfGrad(0))
                         : reinterpret_cast<num::half *>(arena());
    auto *b = reinterpret_cast<num::bf16 *>(arena() + 64);
    for (int i = 0; i < 6; ++i)
      w[i] = num::half(x[i]);
    for (int i = 0; i < 3; ++i)
      b[i] = num::bf16(x[i]);
    addLoss(x[0]);
    storeGrad(0, w, micro);
    storeGrad(1, b, micro);
  }
  void runEvaluate(const void *const *, void *const *) override {}
};

TEST(HostModel, HalfGradientsAreWidenedAndAdded) {
  HalfGrads m;
  m.initialize(1, m.defaults());
  EXPECT_NE(m.grad(0), nullptr);
  // 1/3 and 0.1 round differently in f16 and bf16; 70000 overflows f16.
  float x0[6] = {1.0f / 3, 0.1f, -2.5f, 70000.0f, 1e-3f, -7.0f};
  float x1[6] = {0.1f, 1.0f / 3, 0.5f, -1.0f, 3.0f, 2.0f};
  const void *in0[] = {x0}, *in1[] = {x1};
  m.forwardBackward(in0, 0);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(m.grad(0)[i], float(num::half(x0[i]))) << i;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(m.grad(1)[i], float(num::bf16(x0[i]))) << i;
  EXPECT_TRUE(std::isinf(m.grad(0)[3]));
  m.forwardBackward(in1, 1);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(m.grad(0)[i], float(num::half(x0[i])) + float(num::half(x1[i])))
        << i;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(m.grad(1)[i], float(num::bf16(x0[i])) + float(num::bf16(x1[i])))
        << i;
  // The inf skips the step, as it would have as an FP32 cast.
  EXPECT_EQ(m.step(m.defaults(), 2.0f).skipped, 1);
}

} // namespace
} // namespace ampc::cpu
