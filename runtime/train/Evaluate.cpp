//===- Evaluate.cpp - Loss and accuracy over an eval set -----------------===//
#include "runtime/train/Evaluate.h"
#include "runtime/numerics/Half.h"

#include <algorithm>
#include <cstring>

namespace ampc::rt {

static double valueAt(DType t, const uint8_t *p, int64_t i) {
  switch (t) {
  case DType::F32: {
    float v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case DType::F16: {
    num::half v;
    std::memcpy(&v, p + 2 * i, 2);
    return double(v);
  }
  case DType::BF16: {
    num::bf16 v;
    std::memcpy(&v.bits, p + 2 * i, 2);
    return float(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    return double(v);
  }
  }
  return 0;
}

static int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// The label input for |logits|, or -1.
static int findLabelInput(const std::vector<TensorInfo> &inputs,
                          const TensorInfo &logits) {
  std::vector<int64_t> want(logits.shape.begin(), logits.shape.end() - 1);
  int best = -1, bestRank = 99;
  static const char *kNames[] = {"label", "labels", "targets", "target"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo &t = inputs[i];
    if ((t.dtype != DType::I32 && t.dtype != DType::I64) || t.shape != want)
      continue;
    int rank = 4;
    for (int k = 0; k < 4; ++k)
      if (t.name == kNames[k])
        rank = k;
    if (rank < bestRank) {
      best = int(i);
      bestRank = rank;
    }
  }
  return best;
}

bool maskPaddedRows(const std::vector<TensorInfo> &inputs,
                           std::vector<std::vector<uint8_t>> &in, int64_t batch,
                           int64_t from) {
  bool masked = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo &t = inputs[i];
    if (!t.ignoreValue || (t.dtype != DType::I32 && t.dtype != DType::I64))
      continue;
    masked = true;
    int64_t perRow = count(t.shape) / batch;
    for (int64_t e = from * perRow; e < batch * perRow; ++e) {
      if (t.dtype == DType::I32) {
        int32_t v = int32_t(*t.ignoreValue);
        std::memcpy(in[i].data() + 4 * e, &v, 4);
      } else {
        int64_t v = *t.ignoreValue;
        std::memcpy(in[i].data() + 8 * e, &v, 8);
      }
    }
  }
  return masked;
}

bool canMaskLoss(const std::vector<TensorInfo> &inputs) {
  for (const TensorInfo &t : inputs)
    if (t.ignoreValue && (t.dtype == DType::I32 || t.dtype == DType::I64))
      return true;
  return false;
}

EvalResult evaluateDataset(Model &model, const data::Dataset &data, int rank,
                           int world,
                           const std::function<void(double *, size_t)> &sum) {
  const auto &inputs = model.inputs();
  const auto &outputs = model.outputs();
  int64_t batch = inputs[0].shape[0];
  int64_t global = batch * world;
  EvalResult r;
  int64_t batches = (data.numSamples + global - 1) / global;

  int logitsIdx = -1, labelIdx = -1;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == "logits" && !outputs[i].shape.empty())
      logitsIdx = int(i);
  if (logitsIdx >= 0)
    labelIdx = findLabelInput(inputs, outputs[logitsIdx]);
  r.hasAccuracy = labelIdx >= 0;

  std::vector<std::vector<uint8_t>> out(outputs.size());
  std::vector<void *> outPtrs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    out[i].resize(size_t(count(outputs[i].shape) *
                         data::dtypeSize(outputs[i].dtype)));
    outPtrs.push_back(out[i].data());
  }
  std::vector<std::vector<uint8_t>> in;
  std::vector<const void *> inPtrs(inputs.size());
  std::vector<int64_t> idx(static_cast<size_t>(batch));
  double lossSum = 0;
  int64_t correct = 0, samples = 0, lossSamples = 0;
  for (int64_t b = 0; b < batches; ++b) {
    int64_t start = b * global + rank * batch;
    int64_t real = std::clamp<int64_t>(data.numSamples - start, 0, batch);
    if (real == 0)
      continue; // this rank's slice of the last global batch is empty
    // Padded slots repeat the batch's real samples (valid inputs).
    for (int64_t k = 0; k < batch; ++k)
      idx[size_t(k)] = start + k % real;
    data.gather(idx, in);
    bool lossCounts =
        real == batch || maskPaddedRows(inputs, in, batch, real);
    for (size_t i = 0; i < inputs.size(); ++i)
      inPtrs[i] = in[i].data();
    model.evaluate(inPtrs.data(), outPtrs.data());
    samples += real;
    if (lossCounts) {
      lossSum += valueAt(outputs[0].dtype, out[0].data(), 0) * double(real);
      lossSamples += real;
    }
    if (!r.hasAccuracy)
      continue;
    const TensorInfo &lt = outputs[size_t(logitsIdx)];
    int64_t classes = lt.shape.back(), rows = count(lt.shape) / classes;
    int64_t realRows = rows / batch * real; // rows of the padded samples skipped
    const uint8_t *labels = in[size_t(labelIdx)].data();
    for (int64_t row = 0; row < realRows; ++row) {
      double label = valueAt(inputs[size_t(labelIdx)].dtype, labels, row);
      if (label < 0 || label >= double(classes))
        continue;
      int64_t arg = 0;
      double best = valueAt(lt.dtype, out[size_t(logitsIdx)].data(),
                            row * classes);
      for (int64_t c = 1; c < classes; ++c) {
        double v = valueAt(lt.dtype, out[size_t(logitsIdx)].data(),
                           row * classes + c);
        if (v > best) {
          best = v;
          arg = c;
        }
      }
      ++r.labels;
      correct += arg == int64_t(label);
    }
  }
  if (sum) {
    double t[5] = {lossSum, double(correct), double(r.labels), double(samples),
                   double(lossSamples)};
    sum(t, 5);
    lossSum = t[0];
    correct = int64_t(t[1]);
    r.labels = int64_t(t[2]);
    samples = int64_t(t[3]);
    lossSamples = int64_t(t[4]);
  }
  r.samples = samples;
  r.lossSamples = lossSamples;
  r.loss = lossSamples ? lossSum / double(lossSamples) : 0;
  r.accuracy = r.labels ? double(correct) / double(r.labels) : 0;
  return r;
}

} // namespace ampc::rt
