//===- TestModel.h - A hand-written model for the runtime tests --*- C++ -*-===//
//
// What generated code does, written by hand for a softmax classifier
// logits = x W^T + b, loss = mean cross-entropy: scaled gradients,
// accumulation over micro-batches, unscale + found_inf, global norm, clip,
// AdamW (PyTorch's formulas) skipped on overflow, the dynamic loss scale.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNIT_TESTMODEL_H
#define AMPC_TEST_UNIT_TESTMODEL_H

#include "runtime/Model.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"
#include "runtime/numerics/Scaler.h"

#include <cmath>
#include <cstring>

namespace ampc::test {

class SoftmaxClassifier : public rt::Model {
public:
  SoftmaxClassifier(int64_t batch = 8, int64_t dim = 4, int64_t classes = 3,
                    int accumSteps = 1, std::string name = "softmax_test")
      : name_(std::move(name)), B(batch), D(dim), C(classes) {
    inputs_ = {{"x", rt::DType::F32, {B, D}}, {"label", rt::DType::I64, {B}}};
    params_ = {{"fc.weight", {C, D}, {num::InitSpec::Normal, 0.0, 0.1}},
               {"fc.bias", {C}, {num::InitSpec::Constant, 0.0}}};
    outputs_ = {{"loss", rt::DType::F32, {}},
                {"logits", rt::DType::F32, {B, C}}};
    config_.optimizer = "adamw";
    config_.lossScale = "dynamic";
    config_.clipNorm = true;
    config_.accumSteps = accumSteps;
    for (int p = 0; p < 2; ++p) {
      size_t n = p == 0 ? size_t(C * D) : size_t(C);
      w_[p].resize(n);
      g_[p].resize(n);
      m_[p].resize(n);
      v_[p].resize(n);
    }
  }

  const std::string &name() const override { return name_; }
  const std::vector<rt::TensorInfo> &inputs() const override { return inputs_; }
  const std::vector<rt::ParamInfo> &params() const override { return params_; }
  const std::vector<rt::TensorInfo> &outputs() const override {
    return outputs_;
  }
  const rt::CompileConfig &config() const override { return config_; }
  rt::Hyper defaults() const override {
    rt::Hyper h;
    h.lr = 0.05f;
    h.clipNorm = 5.0f;
    return h;
  }

  void initialize(uint64_t seed, const rt::Hyper &h) override {
    for (int p = 0; p < 2; ++p) {
      num::fillInit(params_[p].init, seed, num::streamId(params_[p].name),
                    w_[p]);
      std::fill(m_[p].begin(), m_[p].end(), 0.0f);
      std::fill(v_[p].begin(), v_[p].end(), 0.0f);
    }
    scaler_ = {h.initScale, 0, h.hysteresis, 0};
    step_ = 0;
    lossAcc_ = 0;
  }

  void beginStep(int64_t iteration) override { iterations.push_back(iteration); }

  void forwardBackward(const void *const *in, int micro) override {
    const float *x = static_cast<const float *>(in[0]);
    const int64_t *y = static_cast<const int64_t *>(in[1]);
    if (micro == 0) {
      for (auto &g : g_)
        std::fill(g.begin(), g.end(), 0.0f);
      lossAcc_ = 0;
    }
    std::vector<float> logits(size_t(B * C));
    float loss = forward(x, y, logits.data());
    lossAcc_ += loss;
    // d(mean CE)/dlogits = (softmax - onehot) / B, times the loss scale.
    for (int64_t b = 0; b < B; ++b) {
      float *l = &logits[size_t(b * C)];
      float mx = l[0];
      for (int64_t c = 1; c < C; ++c)
        mx = std::max(mx, l[c]);
      float sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(l[c] - mx);
      for (int64_t c = 0; c < C; ++c) {
        float d = (std::exp(l[c] - mx) / sum - (c == y[b] ? 1.0f : 0.0f)) /
                  float(B) * scaler_.scale;
        for (int64_t k = 0; k < D; ++k)
          g_[0][size_t(c * D + k)] += d * x[b * D + k];
        g_[1][size_t(c)] += d;
      }
    }
  }

  float *grad(int p) override { return g_[p].data(); }
  float *lossAccumulator() override { return &lossAcc_; }

  rt::StepStats step(const rt::Hyper &h, float divisor) override {
    rt::StepStats s;
    s.scaleUsed = scaler_.scale;
    s.loss = lossAcc_ / divisor;
    float inv = num::invScale(scaler_.scale);
    bool foundInf = false;
    float sq = 0;
    for (auto &g : g_)
      for (float &v : g) {
        v = v * inv / divisor;
        foundInf |= !std::isfinite(v);
        sq += v * v;
      }
    s.gradNorm = std::sqrt(sq);
    s.clipCoef = num::clipCoef(h.clipNorm, s.gradNorm);
    if (!foundInf) {
      ++step_;
      float bc1 = 1 - std::pow(h.beta1, float(step_));
      float bc2 = 1 - std::pow(h.beta2, float(step_));
      for (int p = 0; p < 2; ++p)
        for (size_t i = 0; i < w_[p].size(); ++i) {
          float g = g_[p][i] * s.clipCoef;
          w_[p][i] *= 1 - h.lr * h.weightDecay;
          m_[p][i] = h.beta1 * m_[p][i] + (1 - h.beta1) * g;
          v_[p][i] = h.beta2 * v_[p][i] + (1 - h.beta2) * g * g;
          float denom = std::sqrt(v_[p][i]) / std::sqrt(bc2) + h.eps;
          w_[p][i] -= h.lr / bc1 * m_[p][i] / denom;
        }
    }
    s.skipped = foundInf;
    num::updateScaler(scaler_, foundInf, rt::lossScaleParams(h));
    lastLr = h.lr;
    return s;
  }

  void evaluate(const void *const *in, void *const *out) override {
    float loss = forward(static_cast<const float *>(in[0]),
                         static_cast<const int64_t *>(in[1]),
                         static_cast<float *>(out[1]));
    std::memcpy(out[0], &loss, 4);
  }

  std::vector<rt::StateTensor> stateTensors() override {
    std::vector<rt::StateTensor> t;
    for (int p = 0; p < 2; ++p) {
      const auto &pi = params_[p];
      t.push_back({pi.name, pi.shape, w_[p].data()});
      t.push_back({pi.name + ".exp_avg", pi.shape, m_[p].data()});
      t.push_back({pi.name + ".exp_avg_sq", pi.shape, v_[p].data()});
    }
    return t;
  }
  rt::ScalerState &scaler() override { return scaler_; }
  int64_t &optimizerStep() override { return step_; }

  std::vector<int64_t> iterations; // beginStep calls, for tests
  float lastLr = 0;

private:
  float forward(const float *x, const int64_t *y, float *logits) const {
    float loss = 0;
    for (int64_t b = 0; b < B; ++b) {
      float *l = logits + b * C;
      for (int64_t c = 0; c < C; ++c) {
        float acc = w_[1][size_t(c)];
        for (int64_t k = 0; k < D; ++k)
          acc += w_[0][size_t(c * D + k)] * x[b * D + k];
        l[c] = acc;
      }
      float mx = l[0];
      for (int64_t c = 1; c < C; ++c)
        mx = std::max(mx, l[c]);
      float sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(l[c] - mx);
      loss += std::log(sum) + mx - l[y[b]];
    }
    return loss / float(B);
  }

  std::string name_;
  int64_t B, D, C;
  std::vector<rt::TensorInfo> inputs_, outputs_;
  std::vector<rt::ParamInfo> params_;
  rt::CompileConfig config_;
  std::vector<float> w_[2], g_[2], m_[2], v_[2];
  rt::ScalerState scaler_;
  int64_t step_ = 0;
  float lossAcc_ = 0;
};

} // namespace ampc::test

#endif
