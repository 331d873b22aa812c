//===- TestModel.h - A hand-written model for the runtime tests --*- C++ -*-===//
//
// A model written the way the CPU emitter prints one: a cpu::HostModel
// subclass built from its rt::ModelSpec, supplying only the math. Here that
// is a softmax classifier logits = x W^T + b, loss = mean cross-entropy,
// with gradients of the loss times the loss scale; the base does the rest
// (accumulation over micro-batches, the AMP epilogue with AdamW and clip by
// norm, the dynamic loss scale, the checkpointed state).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNIT_TESTMODEL_H
#define AMPC_TEST_UNIT_TESTMODEL_H

#include "runtime/Model.h"
#include "runtime/cpu/HostModel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace ampc::test {

class SoftmaxClassifier : public cpu::HostModel {
public:
  SoftmaxClassifier(int64_t batch = 8, int64_t dim = 4, int64_t classes = 3,
                    int accumSteps = 1, std::string name = "softmax_test")
      : HostModel(spec(batch, dim, classes, accumSteps, std::move(name))),
        B(batch), D(dim), C(classes) {}

  void beginStep(int64_t iteration) override {
    HostModel::beginStep(iteration);
    iterations.push_back(iteration);
  }
  rt::StepStats step(const rt::Hyper &h, float divisor) override {
    lastLr = h.lr;
    return HostModel::step(h, divisor);
  }

  std::vector<int64_t> iterations; // beginStep calls, for tests
  float lastLr = 0;

private:
  static rt::ModelSpec spec(int64_t B, int64_t D, int64_t C, int accumSteps,
                            std::string name) {
    rt::ModelSpec s;
    s.name = std::move(name);
    s.inputs = {{"x", rt::DType::F32, {B, D}}, {"label", rt::DType::I64, {B}}};
    s.outputs = {{"loss", rt::DType::F32, {}},
                 {"logits", rt::DType::F32, {B, C}}};
    s.params = {{"fc.weight", {C, D}, {num::InitSpec::Normal, 0.0, 0.1}},
                {"fc.bias", {C}, {num::InitSpec::Constant, 0.0}}};
    s.config.optimizer = "adamw";
    s.config.lossScale = "dynamic";
    s.config.clipNorm = true;
    s.config.accumSteps = accumSteps;
    s.defaults.lr = 0.05f;
    s.defaults.clipNorm = 5.0f;
    s.arenaBytes = B * C * int64_t(sizeof(float)); // the logits
    return s;
  }

  void runForwardBackward(const void *const *in, int micro) override {
    const float *x = static_cast<const float *>(in[0]);
    const int64_t *y = static_cast<const int64_t *>(in[1]);
    float *logits = reinterpret_cast<float *>(arena());
    addLoss(forward(x, y, logits));
    // d(mean CE)/dlogits = (softmax - onehot) / B, times the loss scale.
    std::vector<float> gw(size_t(C * D), 0.0f), gb(size_t(C), 0.0f);
    for (int64_t b = 0; b < B; ++b) {
      float *l = logits + b * C;
      float mx = l[0];
      for (int64_t c = 1; c < C; ++c)
        mx = std::max(mx, l[c]);
      float sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(l[c] - mx);
      for (int64_t c = 0; c < C; ++c) {
        float d = (std::exp(l[c] - mx) / sum - (c == y[b] ? 1.0f : 0.0f)) /
                  float(B) * lossScale();
        for (int64_t k = 0; k < D; ++k)
          gw[size_t(c * D + k)] += d * x[b * D + k];
        gb[size_t(c)] += d;
      }
    }
    storeGrad(0, gw.data(), micro);
    storeGrad(1, gb.data(), micro);
  }

  void runEvaluate(const void *const *in, void *const *out) override {
    float loss = forward(static_cast<const float *>(in[0]),
                         static_cast<const int64_t *>(in[1]),
                         static_cast<float *>(out[1]));
    std::memcpy(out[0], &loss, sizeof loss);
  }

  float forward(const float *x, const int64_t *y, float *logits) {
    const float *w = weight(0), *bias = weight(1);
    float loss = 0;
    for (int64_t b = 0; b < B; ++b) {
      float *l = logits + b * C;
      for (int64_t c = 0; c < C; ++c) {
        float acc = bias[c];
        for (int64_t k = 0; k < D; ++k)
          acc += w[c * D + k] * x[b * D + k];
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

  int64_t B, D, C;
};

} // namespace ampc::test

#endif
