//===- DeviceModelTest.cu - cuda::DeviceModel, hand-written body --------===//
//
// What generated CUDA code does, written by hand for linear regression
// pred = x w^T + b, loss = mean (pred - y)^2: one kernel per body, on the
// arena, through DeviceModel's protected interface. Training (SGD,
// accumulation over two micro-batches, graphs captured on the second call
// and replayed), evaluate, checkpoint staging and the dropout step counter
// are checked against the same computation on the host. The metadata test
// runs everywhere; the rest needs a CUDA device and skips without one.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceModel.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

using namespace ampc;

namespace {

#define REQUIRE_GPU()                                                          \
  if (!cuda::deviceAvailable())                                                \
  GTEST_SKIP() << "no CUDA device"

constexpr int B = 8, D = 3;

// Forward (and with |gw| backward) of the batch, in one thread: the same
// operation order as the host reference below, so results are equal.
__global__ void linregKernel(const float *x, const float *y, const float *w,
                             const float *b, const float *scale, float *loss,
                             float *pred, float *gw, float *gb) {
  float sum = 0, dw[D] = {}, db = 0;
  for (int i = 0; i < B; ++i) {
    float p = b[0];
    for (int j = 0; j < D; ++j)
      p += x[i * D + j] * w[j];
    pred[i] = p;
    float r = p - y[i];
    sum += r * r;
    float dp = 2.0f * r / B * (scale ? *scale : 1.0f);
    for (int j = 0; j < D; ++j)
      dw[j] += dp * x[i * D + j];
    db += dp;
  }
  *loss = sum / B;
  if (gw) {
    for (int j = 0; j < D; ++j)
      gw[j] = dw[j];
    *gb = db;
  }
}

// A gradient rounded to bf16: into |h| (what a GEMM's half result is), or
// in place, through bf16 and back (the half result cast to FP32).
__global__ void toBf16(const float *g, __nv_bfloat16 *h, int n) {
  for (int i = 0; i < n; ++i)
    h[i] = __float2bfloat16_rn(g[i]);
}
__global__ void throughBf16(float *g, int n) {
  for (int i = 0; i < n; ++i)
    g[i] = __bfloat162float(__float2bfloat16_rn(g[i]));
}

// Records the dropout step the device holds, as graph.dropout reads it.
__global__ void recordStep(const int64_t *step, int64_t *log) { *log = *step; }

struct HostLinreg {
  std::vector<float> w = std::vector<float>(D), b = {0.0f};
  // Loss and gradient of one batch (the kernel's order).
  float grad(const std::vector<float> &x, const std::vector<float> &y,
             std::vector<float> &gw, float &gb) const {
    float sum = 0, db = 0, dw[D] = {};
    for (int i = 0; i < B; ++i) {
      float p = b[0];
      for (int j = 0; j < D; ++j)
        p += x[i * D + j] * w[j];
      float r = p - y[i];
      sum += r * r;
      float dp = 2.0f * r / B * 1.0f;
      for (int j = 0; j < D; ++j)
        dw[j] += dp * x[i * D + j];
      db += dp;
    }
    gw.assign(dw, dw + D);
    gb = db;
    return sum / B;
  }
};

rt::ModelSpec linregSpec(int accumSteps) {
  rt::ModelSpec s;
  s.name = "linreg";
  s.inputs = {{"x", rt::DType::F32, {B, D}}, {"y", rt::DType::F32, {B}}};
  s.outputs = {{"loss", rt::DType::F32, {}}, {"pred", rt::DType::F32, {B}}};
  s.params = {rt::makeParam("w", {1, D}, num::InitAttrs{.kind = "zeros"}),
              rt::makeParam("b", {1}, num::InitAttrs{.kind = "zeros"})};
  s.config.target = "cuda";
  s.config.optimizer = "sgd";
  s.config.lossScale = "none";
  s.config.accumSteps = accumSteps;
  s.defaults.lr = 0.1f;
  s.arenaBytes = 4 * 256; // loss, pred, gw, gb: one 256-byte slot each
  return s;
}

class Linreg final : public cuda::DeviceModel {
public:
  explicit Linreg(int accumSteps = 1, bool dropout = false)
      : DeviceModel(linregSpec(accumSteps), {}, dropout) {}
  explicit Linreg(rt::ModelSpec spec) : DeviceModel(std::move(spec)) {}

  int fbRuns = 0;             // how often the body was run (not replayed)
  int64_t *stepLog = nullptr; // device: the last dropout step seen
  // Device: where the body copies w's half weight copy (when it has one),
  // with the zero padding after it.
  __nv_bfloat16 *halfLog = nullptr;
  // The gradients rounded to bf16 and stored as FP32 (the cast the
  // train-half-grads pass removes); with gradType BF16 in the spec they
  // are stored as bf16 instead (w's written in place on micro-batch 0).
  bool roundGrads = false;

  // The bf16 rounding of the device master w now (without staging it,
  // which would make the next step recast the copies).
  std::vector<float> masterRounded() const {
    std::vector<float> w(D);
    cudaDeviceSynchronize();
    cudaMemcpy(w.data(), weight(0), D * sizeof(float), cudaMemcpyDeviceToHost);
    for (float &v : w)
      v = __bfloat162float(__float2bfloat16_rn(v));
    return w;
  }

private:
  void runForwardBackward(int micro) override {
    ++fbRuns;
    std::byte *a = arena();
    auto *loss = reinterpret_cast<float *>(a);
    auto *pred = reinterpret_cast<float *>(a + 256);
    auto *gw = reinterpret_cast<float *>(a + 512);
    auto *gb = reinterpret_cast<float *>(a + 768);
    linregKernel<<<1, 1, 0, stream()>>>(static_cast<const float *>(input(0)),
                                       static_cast<const float *>(input(1)),
                                       weight(0), weight(1), lossScale(), loss,
                                       pred, gw, gb);
    if (halfLog)
      cudaMemcpyAsync(halfLog, halfWeight(0),
                      (D + params()[0].halfPadding) * sizeof(__nv_bfloat16),
                      cudaMemcpyDeviceToDevice, stream());
    if (stepLog)
      recordStep<<<1, 1, 0, stream()>>>(dropoutStep(), stepLog);
    addLoss(loss);
    if (params()[0].gradType == rt::DType::BF16) {
      auto *hw = micro == 0 ? static_cast<__nv_bfloat16 *>(halfGrad(0))
                            : reinterpret_cast<__nv_bfloat16 *>(a + 1024);
      auto *hb = reinterpret_cast<__nv_bfloat16 *>(a + 1280);
      toBf16<<<1, 1, 0, stream()>>>(gw, hw, D);
      toBf16<<<1, 1, 0, stream()>>>(gb, hb, 1);
      storeGrad(0, hw, micro);
      gradReady(0);
      storeGrad(1, hb, micro);
      gradReady(1);
      return;
    }
    if (roundGrads) {
      throughBf16<<<1, 1, 0, stream()>>>(gw, D);
      throughBf16<<<1, 1, 0, stream()>>>(gb, 1);
    }
    storeGrad(0, gw, micro);
    gradReady(0);
    storeGrad(1, gb, micro);
    gradReady(1);
  }

  void runEvaluate(const void **outputs) override {
    std::byte *a = arena();
    auto *loss = reinterpret_cast<float *>(a);
    auto *pred = reinterpret_cast<float *>(a + 256);
    linregKernel<<<1, 1, 0, stream()>>>(static_cast<const float *>(input(0)),
                                       static_cast<const float *>(input(1)),
                                       weight(0), weight(1), nullptr, loss,
                                       pred, nullptr, nullptr);
    outputs[0] = loss;
    outputs[1] = pred;
  }
};

struct Batch {
  std::vector<float> x = std::vector<float>(B * D), y = std::vector<float>(B);
  // A copy points |inputs| at its own vectors (the implicit one would keep
  // the original's, freed with it: `std::vector<Batch> b = {Batch(1)}`).
  Batch(const Batch &o) : x(o.x), y(o.y) {}
  Batch &operator=(const Batch &) = delete;
  explicit Batch(unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d;
    for (float &v : x)
      v = d(rng);
    for (int i = 0; i < B; ++i)
      y[i] = 0.5f * x[i * D] - 2.0f * x[i * D + 2] + 1.0f + 0.1f * d(rng);
  }
  const void *inputs[2] = {x.data(), y.data()};
};

TEST(DeviceModel, MetadataFromTheSpecWithoutADevice) {
  Linreg m(2);
  EXPECT_EQ(m.name(), "linreg");
  ASSERT_EQ(m.inputs().size(), 2u);
  EXPECT_EQ(m.inputs()[1].name, "y");
  ASSERT_EQ(m.params().size(), 2u);
  EXPECT_EQ(m.params()[0].shape, (std::vector<int64_t>{1, D}));
  EXPECT_EQ(m.outputs()[1].name, "pred");
  EXPECT_EQ(m.config().optimizer, "sgd");
  EXPECT_EQ(m.config().accumSteps, 2);
  EXPECT_FLOAT_EQ(m.defaults().lr, 0.1f);
}

// SGD over two micro-batches per step: the first step runs eagerly, the
// second is captured, later ones replay; every one matches the host.
TEST(DeviceModel, TrainsLikeTheHostWithGraphsReplayed) {
  REQUIRE_GPU();
  Linreg m(/*accumSteps=*/2);
  rt::Hyper h = m.defaults();
  m.initialize(1, h);
  HostLinreg ref;
  std::vector<Batch> batches = {Batch(1), Batch(2)};
  constexpr int kSteps = 5;
  for (int s = 0; s < kSteps; ++s) {
    m.beginStep(s);
    std::vector<float> gw(D, 0.0f), g;
    float gb = 0, gbm, loss = 0;
    for (int micro = 0; micro < 2; ++micro) {
      m.forwardBackward(batches[micro].inputs, micro);
      loss += ref.grad(batches[micro].x, batches[micro].y, g, gbm);
      for (int j = 0; j < D; ++j)
        gw[j] += g[j];
      gb += gbm;
    }
    m.setStatsWanted(true);
    rt::StepStats stats = m.step(h, /*gradDivisor=*/2.0f);
    EXPECT_NEAR(stats.loss, loss / 2, 1e-4f * (1 + std::fabs(loss)))
        << "step " << s;
    EXPECT_EQ(stats.skipped, 0);
    for (int j = 0; j < D; ++j)
      ref.w[j] -= h.lr * (gw[j] / 2);
    ref.b[0] -= h.lr * (gb / 2);
  }
  // Per variant (micro == 0, micro > 0): one eager run, one capture.
  EXPECT_EQ(m.fbRuns, 4);
  std::vector<rt::StateTensor> st = m.stateTensors();
  ASSERT_EQ(st.size(), 4u); // w, w.momentum_buffer, b, b.momentum_buffer
  EXPECT_EQ(st[1].name, "w.momentum_buffer");
  for (int j = 0; j < D; ++j)
    EXPECT_NEAR(st[0].data[j], ref.w[j], 1e-4f) << j;
  EXPECT_NEAR(st[2].data[0], ref.b[0], 1e-4f);
  EXPECT_EQ(m.optimizerStep(), kSteps);
  EXPECT_EQ(m.scaler().scale, 1.0f); // loss scaling off

  // evaluate() copies the inputs in and the outputs out.
  float loss = 0, pred[B];
  void *outs[2] = {&loss, pred};
  m.evaluate(batches[0].inputs, outs);
  std::vector<float> g;
  float gbm;
  EXPECT_NEAR(loss, ref.grad(batches[0].x, batches[0].y, g, gbm), 1e-4f);
}

// The data-parallel overlap's hook (Model::setGradReadyHook): after each
// micro-batch is queued (eager, captured, replayed) it gets every gradient
// with an event a second stream can wait for to read that gradient's final
// value, and the training is bitwise the same as without the hook.
TEST(DeviceModel, GradReadyHookHandsOverEventsAndChangesNothing) {
  REQUIRE_GPU();
  Linreg plain(2), hooked(2);
  rt::Hyper h = plain.defaults();
  plain.initialize(1, h);
  hooked.initialize(1, h);
  cudaStream_t side = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  std::vector<float> seen[2] = {std::vector<float>(D), std::vector<float>(1)};
  int calls = 0;
  ASSERT_TRUE(hooked.setGradReadyHook([&](int param, void *event) {
    ASSERT_NE(event, nullptr);
    ++calls;
    EXPECT_EQ(cudaStreamWaitEvent(side, static_cast<cudaEvent_t>(event), 0), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(seen[param].data(), hooked.grad(param),
                              seen[param].size() * sizeof(float), cudaMemcpyDeviceToHost, side),
              cudaSuccess);
  }));
  std::vector<Batch> batches = {Batch(1), Batch(2)};
  for (int s = 0; s < 5; ++s) {
    plain.beginStep(s);
    hooked.beginStep(s);
    for (int micro = 0; micro < 2; ++micro) {
      plain.forwardBackward(batches[micro].inputs, micro);
      hooked.forwardBackward(batches[micro].inputs, micro);
      ASSERT_EQ(cudaStreamSynchronize(side), cudaSuccess);
      for (int p = 0; p < 2; ++p) {
        std::vector<float> now(seen[p].size());
        hooked.copyToHost(now.data(), hooked.grad(p), now.size() * sizeof(float));
        EXPECT_EQ(now, seen[p]) << "step " << s << " micro " << micro << " param " << p;
      }
    }
    plain.step(h, 2.0f);
    hooked.step(h, 2.0f);
  }
  EXPECT_EQ(calls, 5 * 2 * 2);
  // Both graph variants captured with the events, once each.
  EXPECT_EQ(hooked.fbRuns, 4);
  std::vector<rt::StateTensor> a = plain.stateTensors(), b = hooked.stateTensors();
  ASSERT_EQ(a.size(), b.size());
  for (size_t t = 0; t < a.size(); ++t) {
    int64_t n = 1;
    for (int64_t d : a[t].shape)
      n *= d;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(a[t].data[i], b[t].data[i]) << a[t].name << "[" << i << "]";
  }
  // Cleared: the graphs are captured again, without the events.
  hooked.setGradReadyHook({});
  hooked.beginStep(5);
  hooked.forwardBackward(batches[0].inputs, 0);
  EXPECT_EQ(calls, 20);
  cudaStreamDestroy(side);
}

// A checkpoint load edits the staged host copies; the next step uploads
// them (what --resume relies on).
// The parameter blocks run in reverse parameter order, as DataParallel
// lists the gradients: b (1 float, padded to 64) first, then w, right
// after it, so a bucket of both is one range NCCL reduces in place.
TEST(DeviceModel, GradientsLieInTheBucketOrder) {
  REQUIRE_GPU();
  Linreg m;
  m.initialize(1, m.defaults());
  EXPECT_EQ(m.grad(0), m.grad(1) + 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.grad(1)) % 256, 0u);
}

TEST(DeviceModel, StagedStateGoesBackBeforeTheNextStep) {
  REQUIRE_GPU();
  Linreg m;
  rt::Hyper h = m.defaults();
  m.initialize(1, h);
  std::vector<rt::StateTensor> st = m.stateTensors();
  for (int j = 0; j < D; ++j)
    st[0].data[j] = float(j + 1);
  m.optimizerStep() = 7;
  Batch batch(3);
  m.beginStep(0);
  m.forwardBackward(batch.inputs, 0);
  m.step(h, 1.0f);
  HostLinreg ref;
  ref.w = {1.0f, 2.0f, 3.0f};
  std::vector<float> g;
  float gb;
  ref.grad(batch.x, batch.y, g, gb);
  st = m.stateTensors();
  for (int j = 0; j < D; ++j)
    EXPECT_NEAR(st[0].data[j], ref.w[j] - h.lr * g[j], 1e-4f) << j;
  EXPECT_EQ(m.optimizerStep(), 8);
}

// The dropout step on the device is iteration * accum + micro on every
// run, replayed graphs included, and is set again where the count breaks.
TEST(DeviceModel, DropoutStepFollowsTheIterationUnderReplay) {
  REQUIRE_GPU();
  Linreg m(/*accumSteps=*/2, /*dropout=*/true);
  rt::Hyper h = m.defaults();
  m.initialize(1, h);
  cuda::check(cudaMalloc(&m.stepLog, sizeof(int64_t)), "malloc");
  Batch batch(4);
  for (int64_t it : {0, 1, 2, 3, 10, 11}) { // 10: a resume
    m.beginStep(it);
    for (int micro = 0; micro < 2; ++micro) {
      m.forwardBackward(batch.inputs, micro);
      int64_t seen = -1;
      m.copyToHost(&seen, m.stepLog, sizeof seen);
      EXPECT_EQ(seen, it * 2 + micro) << "iteration " << it;
    }
    m.step(h, 2.0f);
  }
  cudaFree(m.stepLog);
}

// Overflow attribution through the model: the per-parameter flags arrive
// with the stats (one copy inside the replayed step graph) and only when
// the stats are wanted; the counts cover every skipped step.
TEST(DeviceModel, NonFiniteGradientsComeWithTheStats) {
  REQUIRE_GPU();
  Linreg m;
  rt::Hyper h = m.defaults();
  m.initialize(1, h);
  Batch clean(6), bad(6);
  bad.y[3] = INFINITY; // pred - y = -inf: dw and db non-finite
  using Flags = std::vector<uint8_t>;
  auto step = [&](int64_t it, const Batch &b, bool wanted) {
    m.beginStep(it);
    m.forwardBackward(b.inputs, 0);
    m.setStatsWanted(wanted);
    return m.step(h, 1.0f);
  };
  EXPECT_EQ(step(0, clean, true).skipped, 0); // eager
  EXPECT_EQ(step(1, clean, true).skipped, 0); // captured
  EXPECT_EQ(m.nonFiniteGrads(), (Flags{0, 0}));
  step(2, bad, false); // replayed, not read
  EXPECT_EQ(m.nonFiniteGrads(), (Flags{0, 0}));
  EXPECT_EQ(step(3, bad, true).skipped, 1);
  EXPECT_EQ(m.nonFiniteGrads(), (Flags{1, 1}));
  EXPECT_EQ(step(4, clean, true).skipped, 0);
  EXPECT_EQ(m.nonFiniteGrads(), (Flags{0, 0}));
  EXPECT_EQ(m.nonFiniteCounts(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(m.optimizerStep(), 3);
  m.initialize(1, h); // a new run counts from 0
  EXPECT_EQ(m.nonFiniteCounts(), (std::vector<int64_t>{0, 0}));
}

// Linreg whose step has a bf16 copy of "w" (train-half-weight-copies),
// which the body logs: the copy is the bf16 rounding of the master after
// initialize, after each applied step (the epilogue writes it, in the
// replayed graph too), unchanged by a skipped step, recast after a resume.
// With |padding| zeros after the copy (graph-pad-classes; the parameter),
// those stay zero through all of it.
rt::ModelSpec halfSpec(int64_t padding) {
  rt::ModelSpec s = linregSpec(1);
  s.config.amp = "bf16";
  s.params[0].halfCopy = true;
  s.params[0].halfPadding = padding;
  return s;
}

class HalfCopies : public testing::TestWithParam<int64_t> {};

TEST_P(HalfCopies, FollowTheMasters) {
  REQUIRE_GPU();
  int64_t pad = GetParam();
  Linreg m(halfSpec(pad));
  ASSERT_EQ(cudaMalloc(&m.halfLog, (D + pad) * sizeof(__nv_bfloat16)),
            cudaSuccess);
  rt::Hyper h = m.defaults();
  m.initialize(1, h);
  auto seen = [&] {
    std::vector<__nv_bfloat16> c(D + pad);
    cudaDeviceSynchronize();
    cudaMemcpy(c.data(), m.halfLog, c.size() * sizeof(c[0]),
               cudaMemcpyDeviceToHost);
    std::vector<float> f;
    for (__nv_bfloat16 v : c)
      f.push_back(__bfloat162float(v));
    return f;
  };
  auto rounded = [&] {
    std::vector<float> w = m.masterRounded();
    w.resize(size_t(D + pad), 0.0f);
    return w;
  };
  Batch clean(4), bad(4);
  bad.y[0] = INFINITY;
  for (int it = 0; it < 4; ++it) { // eager, captured, replayed twice
    m.beginStep(it);
    m.forwardBackward(clean.inputs, 0);
    EXPECT_EQ(seen(), rounded()) << "step " << it;
    m.step(h, 1.0f);
  }
  std::vector<float> before = rounded();
  m.beginStep(4);
  m.forwardBackward(bad.inputs, 0);
  EXPECT_EQ(m.step(h, 1.0f).skipped, 1);
  m.beginStep(5);
  m.forwardBackward(clean.inputs, 0);
  EXPECT_EQ(seen(), before);
  // A resume: masters written through the staged state tensors.
  std::vector<rt::StateTensor> st = m.stateTensors();
  std::vector<float> want;
  for (int j = 0; j < D; ++j) {
    st[0].data[j] = 1.0f + float(j) / 3.0f;
    want.push_back(__bfloat162float(__float2bfloat16_rn(st[0].data[j])));
  }
  want.resize(size_t(D + pad), 0.0f);
  m.beginStep(6);
  m.forwardBackward(clean.inputs, 0);
  EXPECT_EQ(seen(), want);
  EXPECT_NE(want[1], want[0]);
  cudaFree(m.halfLog);
}

INSTANTIATE_TEST_SUITE_P(DeviceModel, HalfCopies, testing::Values(0, 5));

// Gradients the step returns in bf16 (train-half-grads): the epilogue reads
// them as they are (one micro-batch), or they are widened into grad()
// (requireFloatGrads(): before setup, before the first step, after two
// steps, or between step 2's backward and its update; two micro-batches).
// Each way trains bitwise like a body that rounds them and stores FP32
// (the cast the pass removed), through a skipped step (inf) and its
// attribution.
rt::ModelSpec halfGradSpec(int accum, bool half) {
  rt::ModelSpec s = linregSpec(accum);
  s.config.amp = "bf16";
  s.arenaBytes = 6 * 256; // + w's and b's bf16 gradients
  if (half)
    s.params[0].gradType = s.params[1].gradType = rt::DType::BF16;
  return s;
}

TEST(DeviceModel, HalfGradientsTrainAsTheirWidening) {
  REQUIRE_GPU();
  std::vector<Batch> batches = {Batch(7), Batch(8), Batch(9)};
  batches[2].y[1] = INFINITY;
  // Step 3's first micro-batch overflows.
  auto train = [&](Linreg &m, int accum, int requireAfter) {
    rt::Hyper h = m.defaults();
    if (requireAfter == -2) // before the model is set up
      m.requireFloatGrads();
    m.initialize(1, h);
    std::vector<rt::StepStats> stats;
    std::vector<std::vector<uint8_t>> flags;
    for (int s = 0; s < 6; ++s) {
      if (s == requireAfter)
        m.requireFloatGrads();
      m.beginStep(s);
      for (int micro = 0; micro < accum; ++micro)
        m.forwardBackward(batches[s == 3 && micro == 0 ? 2 : micro].inputs,
                          micro);
      if (requireAfter == s + 10) // between the backward and the step
        m.requireFloatGrads();
      m.setStatsWanted(true);
      stats.push_back(m.step(h, float(accum)));
      flags.push_back(m.nonFiniteGrads());
    }
    std::vector<float> state;
    for (const rt::StateTensor &t : m.stateTensors()) {
      int64_t n = 1;
      for (int64_t d : t.shape)
        n *= d;
      state.insert(state.end(), t.data, t.data + n);
    }
    return std::make_tuple(stats, flags, state);
  };
  for (int accum : {1, 2}) {
    Linreg ref(halfGradSpec(accum, false));
    ref.roundGrads = true;
    auto [rs, rf, rw] = train(ref, accum, -1);
    ASSERT_EQ(rs[3].skipped, 1);
    ASSERT_EQ(rf[3], (std::vector<uint8_t>{1, 1}));
    for (int requireAfter : {-1, -2, 0, 2, 12}) {
      Linreg m(halfGradSpec(accum, true));
      auto [ms, mf, mw] = train(m, accum, requireAfter);
      for (size_t s = 0; s < rs.size(); ++s) {
        EXPECT_EQ(ms[s].gradNorm, rs[s].gradNorm) << "step " << s;
        EXPECT_EQ(ms[s].loss, rs[s].loss) << "step " << s;
        EXPECT_EQ(ms[s].skipped, rs[s].skipped) << "step " << s;
        EXPECT_EQ(mf[s], rf[s]) << "step " << s;
      }
      EXPECT_EQ(mw, rw) << "accum " << accum << ", FP32 gradients required "
                        << "from step " << requireAfter;
    }
  }
}

} // namespace
