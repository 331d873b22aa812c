//===- StepDump.cpp - --dump-step ------------------------------------------===//
#include "runtime/train/StepDump.h"

#include "runtime/checkpoint/AtomicFile.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/numerics/Half.h"

#include <cstdio>
#include <cstring>

namespace ampc::rt {
namespace {

std::string str(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// One input batch as floats (every dtype converts exactly, tokens < 2^24).
std::vector<float> toF32(const void *p, DType t, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
    case DType::F32: out[i] = static_cast<const float *>(p)[i]; break;
    case DType::F16: out[i] = float(static_cast<const num::half *>(p)[i]); break;
    case DType::BF16: out[i] = float(static_cast<const num::bf16 *>(p)[i]); break;
    case DType::I32: out[i] = float(static_cast<const int32_t *>(p)[i]); break;
    case DType::I64: out[i] = float(static_cast<const int64_t *>(p)[i]); break;
    }
  }
  return out;
}

struct Named {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

class StepDumper final : public Model {
public:
  // The dump reads grad() before the step.
  StepDumper(Model &inner, std::string path)
      : m(inner), path(std::move(path)) {
    m.requireFloatGrads();
  }

  const std::string &name() const override { return m.name(); }
  const std::vector<TensorInfo> &inputs() const override { return m.inputs(); }
  const std::vector<ParamInfo> &params() const override { return m.params(); }
  const std::vector<TensorInfo> &outputs() const override {
    return m.outputs();
  }
  const CompileConfig &config() const override { return m.config(); }
  Hyper defaults() const override { return m.defaults(); }
  std::vector<std::string> batchCounters() const override {
    return m.batchCounters();
  }
  void initialize(uint64_t s, const Hyper &hyper) override {
    seed = s;
    m.initialize(s, hyper);
  }
  void beginStep(int64_t it) override {
    if (!done && iteration < 0)
      iteration = it;
    m.beginStep(it);
  }
  void forwardBackward(const void *const *in, int micro) override {
    if (!done) {
      const int accum = std::max(1, m.config().accumSteps);
      for (size_t i = 0; i < m.inputs().size(); ++i) {
        const TensorInfo &t = m.inputs()[i];
        std::string n = "input." + t.name;
        if (accum > 1)
          n += "." + std::to_string(micro);
        tensors.push_back({n, t.shape, toF32(in[i], t.dtype, numel(t.shape))});
      }
    }
    m.forwardBackward(in, micro);
  }
  float *grad(int param) override { return m.grad(param); }
  void requireFloatGrads() override { m.requireFloatGrads(); }
  float *lossAccumulator() override { return m.lossAccumulator(); }
  // The wrapper is the Model the loop sees: pass everything through.
  void setDataShard(int rank, int worldSize) override {
    m.setDataShard(rank, worldSize);
  }
  void setStatsWanted(bool wanted) override { m.setStatsWanted(wanted); }
  void *computeStream() override { return m.computeStream(); }
  void copyToHost(void *dst, const void *src, size_t bytes) override {
    m.copyToHost(dst, src, bytes);
  }
  StepStats step(const Hyper &h, float gradDivisor) override {
    if (done)
      return m.step(h, gradDivisor);
    std::map<std::string, std::string> meta = {
        {"format", "ampc-step-dump"},
        {"model", m.name()},
        {"iteration", std::to_string(iteration)},
        {"seed", std::to_string(seed)},
        {"grad_divisor", str(gradDivisor)},
        {"loss_sum", str(lossSum())}};
    const CompileConfig &c = m.config();
    meta["amp"] = c.amp;
    meta["optimizer"] = c.optimizer;
    meta["loss_scale_mode"] = c.lossScale;
    meta["nesterov"] = c.nesterov ? "1" : "0";
    meta["clip_norm"] = c.clipNorm ? "1" : "0";
    meta["clip_value"] = c.clipValue ? "1" : "0";
    meta["accum_steps"] = std::to_string(c.accumSteps);
    // Every Hyper field the step ran with, as hyper.NAME (HyperParams.def).
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  meta["hyper." #name] = str(h.field);
#include "runtime/HyperParams.def"
    auto scalerMeta = [&](const char *when) {
      const ScalerState &s = m.scaler();
      std::string p = std::string(when) + ".";
      meta[p + "scale"] = str(s.scale);
      meta[p + "growth_tracker"] = std::to_string(s.growthTracker);
      meta[p + "hysteresis_left"] = std::to_string(s.hysteresisLeft);
      meta[p + "skipped_steps"] = std::to_string(s.skippedSteps);
      meta[p + "optimizer_step"] = std::to_string(m.optimizerStep());
    };
    auto state = [&](const char *when) {
      for (const StateTensor &t : m.stateTensors())
        tensors.push_back({std::string(when) + "." + t.name, t.shape,
                           std::vector<float>(t.data, t.data + numel(t.shape))});
    };
    scalerMeta("before");
    state("before");
    for (size_t i = 0; i < m.params().size(); ++i) {
      const ParamInfo &p = m.params()[i];
      // Device memory on the CUDA target: copied, never dereferenced.
      std::vector<float> g(size_t(numel(p.shape)));
      m.copyToHost(g.data(), m.grad(int(i)), g.size() * sizeof(float));
      tensors.push_back({"grad." + p.name, p.shape, std::move(g)});
    }
    StepStats s = m.step(h, gradDivisor);
    scalerMeta("after");
    state("after");
    meta["loss"] = str(s.loss);
    meta["grad_norm"] = str(s.gradNorm);
    meta["clip_coef"] = str(s.clipCoef);
    meta["skipped"] = std::to_string(s.skipped);
    meta["scale_used"] = str(s.scaleUsed);

    std::vector<F32Tensor> refs;
    for (const Named &t : tensors)
      refs.push_back({t.name, t.shape, t.data.data()});
    writeFileAtomic(path, encodeSafetensors(refs, meta));
    tensors.clear();
    done = true;
    return s;
  }
  void evaluate(const void *const *in, void *const *out) override {
    m.evaluate(in, out);
  }
  std::vector<uint8_t> nonFiniteGrads() override { return m.nonFiniteGrads(); }
  std::vector<int64_t> nonFiniteCounts() override {
    return m.nonFiniteCounts();
  }
  std::vector<StateTensor> stateTensors() override { return m.stateTensors(); }
  ScalerState &scaler() override { return m.scaler(); }
  int64_t &optimizerStep() override { return m.optimizerStep(); }

private:
  float lossSum() {
    float v = 0;
    m.copyToHost(&v, m.lossAccumulator(), sizeof v);
    return v;
  }

  Model &m;
  std::string path;
  bool done = false;
  int64_t iteration = -1;
  uint64_t seed = 0;
  std::vector<Named> tensors;
};

} // namespace

std::unique_ptr<Model> makeStepDumper(Model &inner, std::string path) {
  return std::make_unique<StepDumper>(inner, std::move(path));
}

} // namespace ampc::rt
