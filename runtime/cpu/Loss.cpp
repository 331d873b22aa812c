//===- Loss.cpp - cross_entropy, mse_loss, cross_entropy_backward ---------===//
//
// Mean reductions in float. cross_entropy follows PyTorch: classes on the
// last axis, labels equal to ignore_index are skipped and not counted,
// label smoothing = (1-ls) * nll + ls/C * (-sum_j log p_j), both means over
// the counted rows (NaN when none is counted, as in PyTorch).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/cpu/RowMath.h"
#include "runtime/numerics/Elementwise.h"
#include "runtime/numerics/Exp.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// The shared shape (runtime/kernels/Geometry.h) and the labels, read and
// range-checked on the host.
struct CeProblem : CrossEntropyShape {
  std::vector<int64_t> labels;
};

CeProblem ceProblem(std::string_view op, const CrossEntropyShape &shape,
                    const TensorRef &labels) {
  CeProblem p{shape, loadIds(op, labels)};
  for (int64_t y : p.labels)
    if (y != p.ignore && (y < 0 || y >= p.classes))
      fail(op, "label " + std::to_string(y) + " out of range");
  return p;
}

// log-sum-exp of one row, in float; |e| (n floats) receives e^(x - max).
// The exps have a loop of their own, which vectorizes (RowMath.h).
float logSumExp(const float *x, int64_t n, float *e) {
  float mx = rowMax(x, n);
  for (int64_t j = 0; j < n; ++j)
    e[j] = num::expFloat(x[j] - mx);
  return mx + std::log(rowSum(e, n));
}

// The gradient's factors: the counted rows (in row order, the forward's
// float), g / count, and smoothing's (1 - e) at the label and e / C.
struct CeGradFactors {
  float counted, coef, hit, uniform;
};
CeGradFactors ceGradFactors(const CeProblem &p, float g) {
  float counted = 0.0f;
  for (int64_t y : p.labels)
    counted += y != p.ignore ? 1.0f : 0.0f;
  return {counted, g / counted, float(1.0 - p.smoothing),
          float(p.smoothing / double(p.classes))};
}

// The mean loss from the rows' sums: (1 - e) nll / n + e / C * smooth / n.
float ceLoss(const CrossEntropyShape &p, float nll, float smooth,
             float counted) {
  float loss = nll / counted;
  if (p.smoothing > 0.0)
    loss = float(1.0 - p.smoothing) * loss +
           (smooth / counted) * float(p.smoothing / double(p.classes));
  return loss;
}

} // namespace

// Probability labels (LossIndex.cpp).
void softCrossEntropy(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs);

void crossEntropyKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.cross_entropy";
  if (in.size() > 1 && isFloat(in[1].dtype))
    return softCrossEntropy(in, out, attrs);
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  CeProblem p =
      ceProblem(op, crossEntropyForward(op, logits, lab, y, attrs), lab);
  FloatIn fx(logits);
  std::vector<float> e(size_t(p.classes));
  float nll = 0.0f, smooth = 0.0f, counted = 0.0f;
  for (int64_t r = 0; r < p.rows; ++r) {
    if (p.labels[r] == p.ignore)
      continue;
    const float *x = fx.data() + r * p.classes;
    float lse = logSumExp(x, p.classes, e.data());
    nll -= x[p.labels[r]] - lse;
    if (p.smoothing > 0.0) {
      float s = 0.0f;
      for (int64_t j = 0; j < p.classes; ++j)
        s += x[j] - lse;
      smooth -= s;
    }
    counted += 1.0f;
  }
  float loss = ceLoss(p, nll, smooth, counted);
  narrow(&loss, y);
}

// in: logits, labels, g (scalar). dlogits = g/n * (softmax - (1-ls) onehot
// - ls/C) on counted rows, 0 on ignored ones.
void crossEntropyBackwardKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs) {
  constexpr std::string_view op = "graph.cross_entropy_backward";
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &g = required(op, in, 2), &dx = required(op, out, 0);
  CeProblem p = ceProblem(
      op, crossEntropyBackward(op, logits, lab, g, dx, attrs), lab);
  FloatIn fx(logits), fg(g);
  FloatOut fd(dx, /*zeroed=*/true);
  auto [counted, coef, hit, uniform] = ceGradFactors(p, fg[0]);
  for (int64_t r = 0; r < p.rows; ++r) {
    if (p.labels[r] == p.ignore)
      continue;
    const float *x = fx.data() + r * p.classes;
    float *d = fd.data() + r * p.classes;
    float lse = logSumExp(x, p.classes, d);
    for (int64_t j = 0; j < p.classes; ++j)
      d[j] = coef * (num::expFloat(x[j] - lse) - uniform);
    int64_t y = p.labels[r]; // the label's term once more, with the hit
    d[y] = coef * ((num::expFloat(x[y] - lse) - uniform) - hit);
  }
  fd.commit();
}

// in: logits, labels, g; out: loss, dlogits. crossEntropyKernel's loss and
// crossEntropyBackwardKernel's dlogits from one log-sum-exp per row, with
// the same arithmetic in the same order (bitwise the same). dlogits may be
// the logits' buffer (the memory plan writes it over them): a row's logits
// are all read before its gradient is written, and ignored rows are zeroed
// row by row, not up front.
void crossEntropyWithGradKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs) {
  constexpr std::string_view op = "graph.cross_entropy_with_grad";
  const TensorRef &logits = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &g = required(op, in, 2);
  const TensorRef &y = required(op, out, 0), &dx = required(op, out, 1);
  crossEntropyForward(op, logits, lab, y, attrs);
  CeProblem p = ceProblem(
      op, crossEntropyBackward(op, logits, lab, g, dx, attrs), lab);
  FloatIn fx(logits), fg(g);
  FloatOut fd(dx);
  auto [counted, coef, hit, uniform] = ceGradFactors(p, fg[0]);
  std::vector<float> e(size_t(p.classes));
  float nll = 0.0f, smooth = 0.0f;
  for (int64_t r = 0; r < p.rows; ++r) {
    float *d = fd.data() + r * p.classes;
    int64_t label = p.labels[r];
    if (label == p.ignore) {
      std::fill(d, d + p.classes, 0.0f);
      continue;
    }
    const float *x = fx.data() + r * p.classes;
    float lse = logSumExp(x, p.classes, e.data());
    float xy = x[label];
    nll -= xy - lse;
    if (p.smoothing > 0.0) {
      float s = 0.0f;
      for (int64_t j = 0; j < p.classes; ++j)
        s += x[j] - lse;
      smooth -= s;
    }
    for (int64_t j = 0; j < p.classes; ++j) // x[j] read, then d[j] written
      d[j] = coef * (num::expFloat(x[j] - lse) - uniform);
    d[label] = coef * ((num::expFloat(xy - lse) - uniform) - hit);
  }
  float loss = ceLoss(p, nll, smooth, counted);
  narrow(&loss, y);
  fd.commit();
}

void mseLossKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.mse_loss";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  int64_t n = mseLossCount(op, a, b, y);
  FloatIn fa(a), fb(b);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float d = fa[i] - fb[i];
    sum += d * d;
  }
  float loss = sum / float(n);
  narrow(&loss, y);
}

namespace {

// l1 / smooth_l1 / huber: per-element losses in float, summed in order (the
// sum divided by N for "mean"; reduction "none" writes each).
void regressionLoss(std::string_view op, num::RegressionLoss kind, float p,
                    std::span<const TensorRef> in,
                    std::span<const TensorRef> out, const Attrs &attrs) {
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  auto [n, reduction] = regressionLossShape(op, a, b, y, attrs);
  FloatIn fa(a), fb(b);
  FloatOut r(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float l = num::regressionLoss(kind, fa[i] - fb[i], p);
    if (reduction == Reduction::None)
      r[i] = l;
    else
      sum += l;
  }
  if (reduction != Reduction::None)
    r[0] = reduction == Reduction::Mean ? sum / float(n) : sum;
  r.commit();
}

} // namespace

void l1LossKernel(std::span<const TensorRef> in,
                  std::span<const TensorRef> out, const Attrs &attrs) {
  regressionLoss("graph.l1_loss", num::RegressionLoss::L1, 0.0f, in, out,
                 attrs);
}
void smoothL1LossKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs) {
  regressionLoss("graph.smooth_l1_loss", num::RegressionLoss::SmoothL1,
                 float(attrs.getFloat("beta", 1.0)), in, out, attrs);
}
void huberLossKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  regressionLoss("graph.huber_loss", num::RegressionLoss::Huber,
                 float(attrs.getFloat("delta", 1.0)), in, out, attrs);
}

} // namespace ampc::cpu
