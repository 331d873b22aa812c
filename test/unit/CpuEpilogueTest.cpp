//===- CpuEpilogueTest.cpp - unscale, norms, clipping, optimizer updates --===//
#include "runtime/cpu/Epilogue.h"
#include "runtime/numerics/Scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace ampc::cpu {
namespace {

TEST(CpuEpilogue, UnscaleCheckAndNorm) {
  // Scaled by 4: unscaled tensors are [3, 4] (norm 5) and [0, 0, 12] (12).
  std::vector<float> a = {12, 16}, b = {0, 0, 48};
  GradBuffer grads[] = {{a.data(), 2}, {b.data(), 3}};
  float inv = num::invScale(4.0f);
  EXPECT_EQ(inv, 0.25f);
  UnscaleResult r = unscaleCheckAndNorm(grads, inv);
  EXPECT_FALSE(r.foundInf);
  EXPECT_EQ(r.norm, 13.0f);
  EXPECT_EQ(a, (std::vector<float>{3, 4}));
  EXPECT_EQ(b, (std::vector<float>{0, 0, 12}));
  EXPECT_EQ(globalNorm(grads), 13.0f);

  b[1] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(unscaleCheckAndNorm(grads, 0.5f).foundInf);
  b[1] = std::nanf("");
  EXPECT_TRUE(unscaleAndCheck(grads, 1.0f));
  b[1] = 0;
  a = {65504, -1};
  EXPECT_FALSE(unscaleAndCheck(grads, 1.0f));
  EXPECT_EQ(a, (std::vector<float>{65504, -1})); // invScale 1: untouched
}

TEST(CpuEpilogue, GlobalNormIsAccurateAndDeterministic) {
  std::mt19937 gen(3);
  std::normal_distribution<float> dist(0, 1e-3f);
  std::vector<std::vector<float>> ts = {std::vector<float>(100003), std::vector<float>(7),
                                        std::vector<float>(4096)};
  double ref = 0;
  std::vector<GradBuffer> grads;
  for (auto &t : ts) {
    double ss = 0;
    for (float &x : t) {
      x = dist(gen);
      ss += double(x) * x;
    }
    ref += ss;
    grads.push_back({t.data(), int64_t(t.size())});
  }
  ref = std::sqrt(ref);
  float n1 = globalNorm(grads), n2 = unscaleCheckAndNorm(grads, 1.0f).norm;
  EXPECT_NEAR(n1, ref, 2e-6 * ref);
  EXPECT_EQ(n1, n2);
  EXPECT_EQ(sumOfSquares(ts[0].data(), 100003), sumOfSquares(ts[0].data(), 100003));
}

TEST(CpuEpilogue, ClipByNormAndValue) {
  // The coefficient is num::clipCoef (tested in ScalerTest.cpp).
  std::vector<float> a = {3, 4};
  GradBuffer g[] = {{a.data(), 2}};
  float coef = clipGradNorm(g, globalNorm(g), 1.0f);
  EXPECT_EQ(coef, num::clipCoef(1.0f, 5.0f));
  EXPECT_EQ(a[0], 3.0f * coef);
  EXPECT_NEAR(std::hypot(a[0], a[1]), 1.0, 1e-6);
  std::vector<float> b = {-3, 0.5f, 2, std::nanf("")};
  GradBuffer gb[] = {{b.data(), 4}};
  clipGradValue(gb, 1.0);
  EXPECT_EQ(b[0], -1.0f);
  EXPECT_EQ(b[1], 0.5f);
  EXPECT_EQ(b[2], 1.0f);
  EXPECT_TRUE(std::isnan(b[3]));
}

// Three SGD steps of torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=0.01)
// on p = 1 with gradient 0.5 each step, by hand:
//   1: d = 0.51, buf = 0.51 (clone), p = 0.949
//   2: d = 0.50949, buf = 0.9*0.51 + d = 0.96849, p = 0.852151
//   3: d = 0.50852151, buf = 1.38016251, p = 0.714134749
TEST(CpuEpilogue, SgdMatchesPyTorchFormulas) {
  SgdOptions o{0.1, 0.9, 0.0, 0.01, false};
  float p = 1, buf = 0, g = 0.5f;
  const double want[] = {0.949, 0.852151, 0.714134749};
  for (int s = 0; s < 3; ++s) {
    sgdStep(&p, &g, &buf, 1, o, s == 0);
    EXPECT_NEAR(p, want[s], 1e-6) << "step " << s + 1;
  }
  EXPECT_NEAR(buf, 1.38016251, 1e-6);
  // Nesterov: 1: buf = 0.5, d = 0.5 + 0.9*0.5, p = 1 - 0.095 = 0.905.
  // Dampening 0.5 (no nesterov) 2nd step: buf = 0.45 + 0.25 = 0.7.
  SgdOptions nes{0.1, 0.9, 0.0, 0.0, true};
  p = 1;
  sgdStep(&p, &g, &buf, 1, nes, true);
  EXPECT_NEAR(p, 0.905, 1e-7);
  SgdOptions damp{0.1, 0.9, 0.5, 0.0, false};
  p = 1;
  sgdStep(&p, &g, &buf, 1, damp, true);
  sgdStep(&p, &g, &buf, 1, damp, false);
  EXPECT_NEAR(buf, 0.7, 1e-7);
  EXPECT_NEAR(p, 1 - 0.05 - 0.07, 1e-7);
  // Plain SGD ignores the buffer.
  SgdOptions plain{0.5, 0, 0, 0, false};
  p = 1;
  sgdStep(&p, &g, nullptr, 1, plain, true);
  EXPECT_EQ(p, 0.75f);
}

// Adam/AdamW(lr=0.1, betas=(0.9, 0.999), eps=1e-8) on p = 1 with gradients
// 0.5, -0.25, 2.0 (the double-precision evaluation of torch's formulas).
TEST(CpuEpilogue, AdamAndAdamWMatchPyTorchFormulas) {
  struct Case {
    double wd;
    bool decoupled;
    double want[3];
  } cases[] = {
      {0.0, false, {0.900000002, 0.8733662987078463, 0.8063015345291531}},
      {0.1, false, {0.9000000016666666, 0.8544413674617625, 0.7831704440285274}},
      {0.1, true, {0.890000002, 0.8544662986878463, 0.7788568715222746}},
  };
  const float grads[] = {0.5f, -0.25f, 2.0f};
  for (const Case &c : cases) {
    AdamOptions o;
    o.lr = 0.1;
    o.weightDecay = c.wd;
    o.decoupled = c.decoupled;
    float p = 1, m = 0, v = 0;
    for (int s = 0; s < 3; ++s) {
      adamStep(&p, &grads[s], &m, &v, 1, o, s + 1);
      EXPECT_NEAR(p, c.want[s], 2e-7) << "wd " << c.wd << (c.decoupled ? " adamw" : " adam")
                                      << " step " << s + 1;
    }
  }
  // The first step moves every element by lr (up to eps), whatever |g|.
  std::vector<float> p = {1, 1, 1}, g = {1e-3f, -7, 300}, m(3), v(3);
  AdamOptions o;
  adamStep(p.data(), g.data(), m.data(), v.data(), 3, o, 1);
  EXPECT_NEAR(p[0], 1 - 1e-3, 1e-6);
  EXPECT_NEAR(p[1], 1 + 1e-3, 1e-6);
  EXPECT_NEAR(p[2], 1 - 1e-3, 1e-6);
}

// Random FP32 tensors for the epilogue: masters, gradients, moments.
struct Tensors {
  std::vector<std::vector<float>> w, g, m, v;

  Tensors(std::vector<int64_t> sizes, float gradScale, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0, 1);
    for (int64_t n : sizes) {
      w.emplace_back(size_t(n));
      g.emplace_back(size_t(n));
      m.emplace_back(size_t(n), 0.0f);
      v.emplace_back(size_t(n), 0.0f);
      for (float &x : w.back())
        x = dist(gen);
      for (float &x : g.back())
        x = dist(gen) * gradScale;
    }
  }
  std::vector<EpilogueTensor> epilogueTensors() {
    std::vector<EpilogueTensor> t;
    for (size_t k = 0; k < w.size(); ++k)
      t.push_back({g[k].data(), w[k].data(), m[k].data(), v[k].data(),
                   int64_t(w[k].size())});
    return t;
  }
  std::vector<GradBuffer> grads() {
    std::vector<GradBuffer> b;
    for (auto &x : g)
      b.push_back({x.data(), int64_t(x.size())});
    return b;
  }
};

// run() is the helpers in the order PyTorch applies them, bit for bit.
TEST(CpuEpilogue, RunIsTheHelpersInOrder) {
  Tensors a({1000, 7, 300}, 512.0f, 5), b = a;
  EpilogueConfig cfg;
  cfg.optimizer = EpilogueConfig::Optimizer::AdamW;
  cfg.lossScale = EpilogueConfig::LossScale::Dynamic;
  cfg.clipNorm = cfg.clipValue = true;
  Epilogue epi(a.epilogueTensors(), cfg);
  rt::Hyper h;
  h.lr = 0.01f;
  h.weightDecay = 0.1f;
  h.clipNorm = 0.5f;
  h.clipValue = 0.01f;
  h.growthInterval = 1;
  HostState st;
  st.scaler.scale = 1024.0f;
  st.lossAccumulator = 3.0f;
  rt::StepStats s = epi.run(st, h, 2.0f); // two micro-batches

  std::vector<GradBuffer> bufs = b.grads();
  UnscaleResult r =
      unscaleCheckAndNorm(bufs, float(1.0 / (1024.0 * 2.0)));
  float coef = clipGradNorm(bufs, r.norm, h.clipNorm);
  clipGradValue(bufs, h.clipValue);
  AdamOptions o; // Hyper's floats, as the step passes them
  o.lr = h.lr;
  o.beta1 = h.beta1;
  o.beta2 = h.beta2;
  o.eps = h.eps;
  o.weightDecay = h.weightDecay;
  o.decoupled = true;
  for (size_t k = 0; k < b.w.size(); ++k)
    adamStep(b.w[k].data(), b.g[k].data(), b.m[k].data(), b.v[k].data(),
             int64_t(b.w[k].size()), o, 1);

  EXPECT_EQ(a.w, b.w);
  EXPECT_EQ(a.m, b.m);
  EXPECT_EQ(a.v, b.v);
  EXPECT_EQ(s.loss, 1.5f);
  EXPECT_EQ(s.gradNorm, r.norm);
  EXPECT_EQ(s.clipCoef, coef);
  EXPECT_LT(coef, 1.0f);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_EQ(s.scaleUsed, 1024.0f);
  EXPECT_EQ(st.step, 1);
  EXPECT_EQ(st.lossAccumulator, 0.0f);
  EXPECT_EQ(st.scaler.scale, 2048.0f); // grown: interval 1
  EXPECT_EQ(st.scaler.skippedSteps, 0);

  // One micro-batch unscales by num::invScale.
  Tensors c({5}, 3.0f, 6), d = c;
  Epilogue one(c.epilogueTensors(), cfg);
  HostState st1;
  st1.scaler.scale = 3.0f;
  one.run(st1, h, 1.0f);
  std::vector<GradBuffer> dbufs = d.grads();
  UnscaleResult rd = unscaleCheckAndNorm(dbufs, num::invScale(3.0f));
  clipGradNorm(dbufs, rd.norm, h.clipNorm);
  clipGradValue(dbufs, h.clipValue);
  adamStep(d.w[0].data(), d.g[0].data(), d.m[0].data(), d.v[0].data(), 5, o,
           1);
  EXPECT_EQ(c.w, d.w);
}

// An inf/NaN gradient changes nothing but the scaler, whatever the mode;
// the next clean step is the optimizer's first (SGD clones its buffer).
TEST(CpuEpilogue, OverflowSkipsTheStep) {
  using LS = EpilogueConfig::LossScale;
  for (LS mode : {LS::Dynamic, LS::Static, LS::None}) {
    Tensors a({64, 3}, 1.0f, 7);
    a.g[1][2] = std::numeric_limits<float>::infinity();
    Tensors before = a;
    EpilogueConfig cfg;
    cfg.optimizer = EpilogueConfig::Optimizer::Sgd;
    cfg.lossScale = mode;
    cfg.clipNorm = true;
    cfg.nesterov = true;
    Epilogue epi(a.epilogueTensors(), cfg);
    rt::Hyper h;
    h.lr = 0.1f;
    h.momentum = 0.9f;
    HostState st;
    st.scaler.scale = 8.0f;
    rt::StepStats s = epi.run(st, h, 1.0f);
    EXPECT_EQ(s.skipped, 1);
    EXPECT_EQ(s.clipCoef, 1.0f);
    EXPECT_EQ(a.w, before.w);
    EXPECT_EQ(a.m, before.m);
    EXPECT_EQ(st.step, 0);
    EXPECT_EQ(st.scaler.skippedSteps, 1);
    EXPECT_EQ(st.scaler.scale, mode == LS::Dynamic ? 4.0f : 8.0f);

    a.g = before.g;
    a.g[1][2] = 0.5f;
    Tensors b = a;
    float scale = st.scaler.scale;
    s = epi.run(st, h, 1.0f);
    EXPECT_EQ(s.skipped, 0);
    EXPECT_EQ(st.step, 1);
    std::vector<GradBuffer> bufs = b.grads();
    UnscaleResult r = unscaleCheckAndNorm(bufs, num::invScale(scale));
    clipGradNorm(bufs, r.norm, h.clipNorm);
    SgdOptions o{h.lr, h.momentum, 0.0, 0.0, true};
    for (size_t k = 0; k < b.w.size(); ++k)
      sgdStep(b.w[k].data(), b.g[k].data(), b.m[k].data(),
              int64_t(b.w[k].size()), o, /*firstStep=*/true);
    EXPECT_EQ(a.w, b.w);
    EXPECT_EQ(a.m, b.m);
    EXPECT_EQ(a.m, a.g); // the momentum buffer is the gradient's clone
  }
}

// The floor halts on a skipped step and every later step is refused: a
// clean gradient after it changes no weight, moment, counter or scale.
TEST(CpuEpilogue, HaltedRefusesEveryStep) {
  Tensors a({300, 5}, 1.0f, 9);
  Tensors clean = a;
  EpilogueConfig cfg; // AdamW, dynamic
  Epilogue epi(a.epilogueTensors(), cfg);
  rt::Hyper h;
  h.scaleFloor = 0.5f;
  h.maxConsecutiveSkips = 0;
  HostState st;
  st.scaler.scale = 1.0f;
  // A clean step trains; two overflows: 1 -> 0.5, then 0.25 < 0.5 halts.
  rt::StepStats s = epi.run(st, h, 1.0f);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_EQ(s.halted, 0);
  Tensors trained = a;
  for (int k = 0; k < 2; ++k) {
    a.g = clean.g;
    a.g[0][7] = std::nanf("");
    s = epi.run(st, h, 1.0f);
    EXPECT_EQ(s.skipped, 1);
    EXPECT_EQ(s.scaleUsed, k == 0 ? 1.0f : 0.5f);
  }
  EXPECT_EQ(s.halted, num::kHaltScaleFloor);
  EXPECT_EQ(st.scaler.halted, num::kHaltScaleFloor);
  EXPECT_EQ(st.scaler.scale, 0.5f);
  EXPECT_EQ(st.scaler.haltScale, 0.25f);
  EXPECT_EQ(st.scaler.consecutiveSkips, 2);
  for (int k = 0; k < 3; ++k) {
    a.g = clean.g;
    st.lossAccumulator = 2.0f;
    s = epi.run(st, h, 1.0f);
    EXPECT_EQ(s.skipped, 1);
    EXPECT_EQ(s.halted, num::kHaltScaleFloor);
    EXPECT_EQ(st.lossAccumulator, 0.0f);
  }
  EXPECT_EQ(a.w, trained.w);
  EXPECT_EQ(a.m, trained.m);
  EXPECT_EQ(a.v, trained.v);
  EXPECT_EQ(st.step, 1);
  EXPECT_EQ(st.scaler.scale, 0.5f);
  EXPECT_EQ(st.scaler.skippedSteps, 2);
  EXPECT_EQ(st.scaler.refusedSteps, 3);
}

// Overflow attribution: one flag per tensor, each the OR of its elements'
// non-finite checks (found_inf is the OR of the flags), whatever the tensor
// size (one and several 256-element blocks) and wherever the element.
TEST(CpuEpilogue, PerTensorNonFiniteFlags) {
  std::vector<float> a(1000, 1.0f), b(3, 2.0f), c(257, -1.0f);
  GradBuffer grads[] = {{a.data(), 1000}, {b.data(), 3}, {c.data(), 257}};
  std::vector<uint8_t> flags(3, 7);
  EXPECT_FALSE(unscaleCheckAndNorm(grads, 1.0f, flags).foundInf);
  EXPECT_EQ(flags, (std::vector<uint8_t>{0, 0, 0}));
  a[999] = std::numeric_limits<float>::infinity(); // the last block
  c[256] = std::nanf("");                          // a lone last element
  EXPECT_TRUE(unscaleCheckAndNorm(grads, 0.5f, flags).foundInf);
  EXPECT_EQ(flags, (std::vector<uint8_t>{1, 0, 1}));
  a[999] = 1.0f;
  c[256] = 1.0f;
  b[0] = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(unscaleCheckAndNorm(grads, 1.0f, flags).foundInf);
  EXPECT_EQ(flags, (std::vector<uint8_t>{0, 1, 0}));
  // Without flags it is the same call; a wrong-sized span is refused.
  EXPECT_TRUE(unscaleCheckAndNorm(grads, 1.0f).foundInf);
  std::vector<uint8_t> two(2);
  EXPECT_THROW(unscaleCheckAndNorm(grads, 1.0f, two), std::invalid_argument);
}

// run() keeps the last step's flags and counts, per tensor, the steps it
// was non-finite in; a clean step clears the flags, not the counts; a
// refused step (halted) keeps the halting step's flags and counts nothing.
TEST(CpuEpilogue, RunCountsNonFiniteStepsPerTensor) {
  Tensors a({300, 5, 40}, 1.0f, 11);
  Tensors clean = a;
  Epilogue epi(a.epilogueTensors(), EpilogueConfig{}); // AdamW, dynamic
  rt::Hyper h;
  h.maxConsecutiveSkips = 3;
  HostState st;
  st.scaler.scale = 1024.0f;
  const float inf = std::numeric_limits<float>::infinity();
  using Flags = std::vector<uint8_t>;
  using Counts = std::vector<int64_t>;

  a.g[2][39] = inf;
  EXPECT_EQ(epi.run(st, h, 1.0f).skipped, 1);
  EXPECT_EQ(st.nonFinite, (Flags{0, 0, 1}));
  EXPECT_EQ(st.nonFiniteSteps, (Counts{0, 0, 1}));

  a.g = clean.g;
  a.g[0][0] = std::nanf("");
  a.g[2][0] = -inf;
  EXPECT_EQ(epi.run(st, h, 1.0f).skipped, 1);
  EXPECT_EQ(st.nonFinite, (Flags{1, 0, 1}));
  EXPECT_EQ(st.nonFiniteSteps, (Counts{1, 0, 2}));

  a.g = clean.g;
  EXPECT_EQ(epi.run(st, h, 1.0f).skipped, 0);
  EXPECT_EQ(st.nonFinite, (Flags{0, 0, 0}));
  EXPECT_EQ(st.nonFiniteSteps, (Counts{1, 0, 2}));

  // Three skips in a row halt (max_consecutive_skips 3); later steps are
  // refused, their (here: other) non-finite gradients not looked at.
  for (int k = 0; k < 3; ++k) {
    a.g = clean.g;
    a.g[1][4] = inf;
    EXPECT_EQ(epi.run(st, h, 1.0f).skipped, 1);
  }
  EXPECT_EQ(st.scaler.halted, num::kHaltConsecutiveSkips);
  a.g = clean.g;
  a.g[0][5] = inf;
  EXPECT_EQ(epi.run(st, h, 1.0f).skipped, 1);
  EXPECT_EQ(st.nonFinite, (Flags{0, 1, 0}));
  EXPECT_EQ(st.nonFiniteSteps, (Counts{1, 3, 2}));
}

// Without a loss scaler a non-finite step is skipped too (PyTorch applies
// it), and max_consecutive_skips stops a run of them.
TEST(CpuEpilogue, NoScalerSkipsAndHaltsAfterConsecutiveSkips) {
  Tensors a({64}, 1.0f, 4);
  Tensors before = a;
  EpilogueConfig cfg;
  cfg.optimizer = EpilogueConfig::Optimizer::Sgd;
  cfg.lossScale = EpilogueConfig::LossScale::None;
  Epilogue epi(a.epilogueTensors(), cfg);
  rt::Hyper h;
  h.maxConsecutiveSkips = 2;
  HostState st;
  for (int k = 0; k < 2; ++k) {
    a.g = before.g;
    a.g[0][3] = std::numeric_limits<float>::infinity();
    rt::StepStats s = epi.run(st, h, 1.0f);
    EXPECT_EQ(s.skipped, 1);
    EXPECT_EQ(s.halted, k == 0 ? 0 : num::kHaltConsecutiveSkips);
  }
  EXPECT_EQ(a.w, before.w);
  EXPECT_EQ(st.scaler.scale, 1.0f);
  EXPECT_EQ(st.scaler.consecutiveSkips, 2);
  EXPECT_EQ(st.scaler.haltScale, 1.0f);
  a.g = before.g;
  rt::StepStats s = epi.run(st, h, 1.0f);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(a.w, before.w);
  EXPECT_EQ(st.step, 0);
}

TEST(CpuEpilogue, ConfigFromCompileConfig) {
  rt::CompileConfig c;
  c.optimizer = "sgd";
  c.lossScale = "static";
  c.nesterov = true;
  c.clipValue = true;
  EpilogueConfig e = EpilogueConfig::fromCompileConfig(c);
  EXPECT_EQ(e.optimizer, EpilogueConfig::Optimizer::Sgd);
  EXPECT_EQ(e.lossScale, EpilogueConfig::LossScale::Static);
  EXPECT_TRUE(e.nesterov);
  EXPECT_TRUE(e.clipValue);
  EXPECT_FALSE(e.clipNorm);
  c.optimizer = "adam";
  c.lossScale = "none";
  e = EpilogueConfig::fromCompileConfig(c);
  EXPECT_EQ(e.optimizer, EpilogueConfig::Optimizer::Adam);
  EXPECT_EQ(e.lossScale, EpilogueConfig::LossScale::None);
  c.optimizer = "lion";
  EXPECT_THROW(EpilogueConfig::fromCompileConfig(c), std::invalid_argument);
}

} // namespace
} // namespace ampc::cpu
