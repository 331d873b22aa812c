//===- Epilogue.cpp - The fused AMP epilogue on the host ------------------===//
#include "runtime/cpu/Epilogue.h"
#include "runtime/cpu/HalfBlocks.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/Optimizer.h"
#include "runtime/numerics/Scaler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ampc::cpu {

namespace {

constexpr int64_t kBlock = 256;

// Pairwise over blocks, so the rounding error grows with log(n).
template <class F> float pairwiseSum(int64_t lo, int64_t hi, F blockSum) {
  if (hi - lo <= kBlock)
    return blockSum(lo, hi);
  int64_t blocks = (hi - lo + kBlock - 1) / kBlock;
  int64_t mid = lo + (blocks / 2) * kBlock;
  return pairwiseSum(lo, mid, blockSum) + pairwiseSum(mid, hi, blockSum);
}

} // namespace

float sumOfSquares(const float *x, int64_t n) {
  return pairwiseSum(0, n, [x](int64_t lo, int64_t hi) {
    float s = 0.0f;
    for (int64_t i = lo; i < hi; ++i)
      s += x[i] * x[i];
    return s;
  });
}

float globalNorm(std::span<const GradBuffer> grads) {
  float total = 0.0f;
  for (const GradBuffer &g : grads) {
    float norm = std::sqrt(sumOfSquares(g.data, g.size));
    total += norm * norm;
  }
  return std::sqrt(total);
}

bool unscaleAndCheck(std::span<const GradBuffer> grads, float invScale) {
  bool found = false;
  for (const GradBuffer &g : grads)
    for (int64_t i = 0; i < g.size; ++i) {
      float v = g.data[i];
      found |= !std::isfinite(v);
      g.data[i] = invScale == 1.0f ? v : v * invScale;
    }
  return found;
}

UnscaleResult unscaleCheckAndNorm(std::span<const GradBuffer> grads,
                                  float invScale, std::span<uint8_t> nonFinite) {
  if (!nonFinite.empty() && nonFinite.size() != grads.size())
    throw std::invalid_argument("unscaleCheckAndNorm: one flag per buffer");
  // One pass per tensor: unscale, check and square the unscaled value.
  UnscaleResult r{false, 0.0f};
  float total = 0.0f;
  for (size_t k = 0; k < grads.size(); ++k) {
    const GradBuffer &g = grads[k];
    bool found = false;
    float ss = pairwiseSum(0, g.size, [&](int64_t lo, int64_t hi) {
      float s = 0.0f;
      for (int64_t i = lo; i < hi; ++i) {
        float v = g.data[i];
        found |= !std::isfinite(v);
        v = invScale == 1.0f ? v : v * invScale;
        g.data[i] = v;
        s += v * v;
      }
      return s;
    });
    r.foundInf |= found;
    if (!nonFinite.empty())
      nonFinite[k] = found ? 1 : 0;
    float norm = std::sqrt(ss);
    total += norm * norm;
  }
  r.norm = std::sqrt(total);
  return r;
}

void scaleGrads(std::span<const GradBuffer> grads, float coef) {
  for (const GradBuffer &g : grads)
    for (int64_t i = 0; i < g.size; ++i)
      g.data[i] *= coef;
}

float clipGradNorm(std::span<const GradBuffer> grads, float norm,
                   float maxNorm) {
  float coef = num::clipCoef(maxNorm, norm);
  scaleGrads(grads, coef);
  return coef;
}

void clipGradValue(std::span<const GradBuffer> grads, double clip) {
  float c = float(clip);
  for (const GradBuffer &g : grads)
    for (int64_t i = 0; i < g.size; ++i)
      g.data[i] = std::clamp(g.data[i], -c, c); // NaN stays NaN
}

void sgdStep(float *param, const float *grad, float *buf, int64_t n,
             const SgdOptions &opt, bool firstStep) {
  const num::SgdCoeffs c = num::sgdCoeffs(opt.lr, opt.momentum, opt.dampening,
                                          opt.weightDecay, opt.nesterov);
  float unused = 0.0f; // no buffer without momentum
  for (int64_t i = 0; i < n; ++i)
    param[i] = num::sgdUpdate(param[i], grad[i],
                              opt.momentum != 0 ? buf[i] : unused, c,
                              firstStep);
}

void adamStep(float *param, const float *grad, float *m, float *v, int64_t n,
              const AdamOptions &opt, int64_t step) {
  const num::AdamCoeffs c =
      num::adamCoeffs(opt.lr, opt.beta1, opt.beta2, opt.eps, opt.weightDecay,
                      opt.decoupled, step);
  for (int64_t i = 0; i < n; ++i)
    param[i] = num::adamUpdate(param[i], grad[i], m[i], v[i], c);
}

Epilogue::Epilogue(std::vector<EpilogueTensor> tensors, EpilogueConfig config)
    : tensors_(std::move(tensors)), config_(config) {
  for (const EpilogueTensor &t : tensors_)
    grads_.push_back({t.grad, t.n});
}

rt::StepStats Epilogue::run(HostState &state, const rt::Hyper &hyper,
                            float gradDivisor) const {
  rt::StepStats stats;
  stats.scaleUsed = state.scaler.scale;
  stats.loss = state.lossAccumulator / gradDivisor;
  state.lossAccumulator = 0.0f;

  // Halted (num::finishStep): refuse the step, touch nothing.
  if (state.scaler.halted) {
    num::refuseStep(state.scaler);
    stats.skipped = 1;
    stats.halted = state.scaler.halted;
    return stats;
  }

  // Unscale (gradients of loss * scale, summed over gradDivisor
  // micro-batches), check for inf/NaN, global norm.
  const float scale = state.scaler.scale;
  const float invScale =
      gradDivisor == 1.0f
          ? num::invScale(scale)
          : float(1.0 / (double(scale) * double(gradDivisor)));
  state.nonFinite.resize(tensors_.size());
  state.nonFiniteSteps.resize(tensors_.size());
  const UnscaleResult unscaled =
      unscaleCheckAndNorm(grads_, invScale, state.nonFinite);
  const bool foundInf = unscaled.foundInf;
  for (size_t k = 0; k < tensors_.size(); ++k)
    state.nonFiniteSteps[k] += state.nonFinite[k];
  stats.gradNorm = unscaled.norm;
  stats.skipped = foundInf ? 1 : 0;

  // An overflowing step changes nothing but the scaler.
  if (!foundInf) {
    if (config_.clipNorm)
      stats.clipCoef = clipGradNorm(grads_, unscaled.norm, hyper.clipNorm);
    if (config_.clipValue)
      clipGradValue(grads_, hyper.clipValue);
    update(state, hyper);
  }

  // Skip counts, scale update (dynamic only), halting.
  num::finishStep(state.scaler, foundInf,
                  config_.lossScale == EpilogueConfig::LossScale::Dynamic,
                  rt::lossScaleParams(hyper));
  stats.halted = state.scaler.halted;
  return stats;
}

void Epilogue::update(HostState &state, const rt::Hyper &h) const {
  ++state.step;
  if (config_.optimizer == EpilogueConfig::Optimizer::Sgd) {
    SgdOptions opt;
    opt.lr = h.lr;
    opt.momentum = h.momentum;
    opt.dampening = h.dampening;
    opt.weightDecay = h.weightDecay;
    opt.nesterov = config_.nesterov;
    for (const EpilogueTensor &t : tensors_)
      sgdStep(t.param, t.grad, t.m, t.n, opt, state.step == 1);
    writeHalfCopies();
    return;
  }
  AdamOptions opt;
  opt.lr = h.lr;
  opt.beta1 = h.beta1;
  opt.beta2 = h.beta2;
  opt.eps = h.eps;
  opt.weightDecay = h.weightDecay;
  opt.decoupled = config_.optimizer == EpilogueConfig::Optimizer::AdamW;
  for (const EpilogueTensor &t : tensors_)
    adamStep(t.param, t.grad, t.m, t.v, t.n, opt, state.step);
  writeHalfCopies();
}

void Epilogue::writeHalfCopies() const {
  for (const EpilogueTensor &t : tensors_)
    if (t.half)
      castToHalf(t.param, t.half, t.n, config_.halfType);
}

void castToHalf(const float *src, void *half, int64_t n, rt::DType type) {
  if (type == rt::DType::BF16) {
    auto *h = static_cast<num::bf16 *>(half);
    for (int64_t i = 0; i < n; ++i)
      h[i] = num::bf16(src[i]);
  } else {
    floatToHalf(src, static_cast<num::half *>(half), n);
  }
}

} // namespace ampc::cpu
