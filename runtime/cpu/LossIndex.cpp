//===- LossIndex.cpp - nll/bce losses, argmax, gather, cumsum -------------===//
//
// Float math, sums in element order (deterministic). nll_loss follows
// PyTorch: ignored rows give 0 and are not counted; the mean divides by the
// counted rows (NaN when none is counted).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/kernels/LossIndexGeometry.h"
#include "runtime/numerics/LossIndex.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

std::vector<int64_t> checkedLabels(std::string_view op, const NllShape &s,
                                   const TensorRef &labels) {
  std::vector<int64_t> y = loadIds(op, labels);
  for (int64_t v : y)
    if (v != s.ignore && (v < 0 || v >= s.classes))
      fail(op, "label " + std::to_string(v) + " out of range");
  return y;
}

} // namespace

void nllLossKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.nll_loss";
  const TensorRef &x = required(op, in, 0), &lab = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  NllShape s = nllLossShape(op, x, lab, y, attrs);
  std::vector<int64_t> labels = checkedLabels(op, s, lab);
  FloatIn fx(x);
  FloatOut r(y);
  float sum = 0.0f, counted = 0.0f;
  for (int64_t i = 0; i < s.rows; ++i) {
    bool ok = labels[i] != s.ignore;
    float l = ok ? -fx[i * s.classes + labels[i]] : 0.0f;
    if (s.reduction == Reduction::None)
      r[i] = l;
    else if (ok)
      sum += l;
    counted += ok ? 1.0f : 0.0f;
  }
  if (s.reduction != Reduction::None)
    r[0] = s.reduction == Reduction::Mean ? sum / counted : sum;
  r.commit();
}

void nllLossBackwardKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out,
                           const Attrs &attrs) {
  constexpr std::string_view op = "graph.nll_loss_backward";
  const TensorRef &lab = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  NllShape s = nllLossBackwardShape(op, lab, g, dx, attrs);
  std::vector<int64_t> labels = checkedLabels(op, s, lab);
  FloatIn fg(g);
  FloatOut d(dx, /*zeroed=*/true);
  float counted = 0.0f;
  for (int64_t v : labels)
    counted += v != s.ignore ? 1.0f : 0.0f;
  for (int64_t i = 0; i < s.rows; ++i) {
    if (labels[i] == s.ignore)
      continue;
    float w = s.reduction == Reduction::None   ? fg[i]
              : s.reduction == Reduction::Mean ? fg[0] / counted
                                               : fg[0];
    d[i * s.classes + labels[i]] = -w;
  }
  d.commit();
}

void binaryCrossEntropyWithLogitsKernel(std::span<const TensorRef> in,
                                        std::span<const TensorRef> out,
                                        const Attrs &attrs) {
  constexpr std::string_view op = "graph.binary_cross_entropy_with_logits";
  const TensorRef &x = required(op, in, 0), &t = required(op, in, 1);
  const TensorRef *pw = optional(in, 2);
  const TensorRef &y = required(op, out, 0);
  BceShape s = bceShape(op, x, t, pw, y, attrs);
  FloatIn fx(x), ft(t);
  std::vector<float> w(size_t(std::max<int64_t>(s.weights, 1)), 1.0f);
  if (pw)
    widen(*pw, w.data());
  FloatOut r(y);
  float sum = 0.0f;
  for (int64_t k = 0; k < s.n; ++k) {
    float l = num::bceWithLogits(fx[k], ft[k], w[size_t(k % int64_t(w.size()))]);
    if (s.reduction == Reduction::None)
      r[k] = l;
    else
      sum += l;
  }
  if (s.reduction != Reduction::None)
    r[0] = s.reduction == Reduction::Mean ? sum / float(s.n) : sum;
  r.commit();
}

// cross_entropy with probability labels (called by crossEntropyKernel):
// per row -sum_c t'_c (x_c - lse), t' = (1 - e) t + e / C, rows summed in
// order and divided by their number.
void softCrossEntropy(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.cross_entropy";
  const TensorRef &z = required(op, in, 0), &t = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  SoftCeShape s = softCrossEntropyShape(op, z, t, y, attrs);
  FloatIn fz(z), ft(t);
  float keep = float(1.0 - s.smoothing);
  float uniform = float(s.smoothing / double(s.classes));
  float total = 0.0f;
  for (int64_t r = 0; r < s.rows; ++r) {
    const float *x = fz.data() + r * s.classes, *p = ft.data() + r * s.classes;
    float mx = -INFINITY;
    for (int64_t j = 0; j < s.classes; ++j)
      mx = std::fmax(mx, x[j]);
    float e = 0.0f;
    for (int64_t j = 0; j < s.classes; ++j)
      e += std::exp(x[j] - mx);
    float lse = mx + std::log(e), row = 0.0f;
    for (int64_t j = 0; j < s.classes; ++j)
      row -= (keep * p[j] + uniform) * (x[j] - lse);
    total += row;
  }
  float loss = total / float(s.rows);
  narrow(&loss, y);
}

// First index of the maximum; a NaN wins (torch.argmax).
void argmaxKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs) {
  constexpr std::string_view op = "graph.argmax";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  AxisSplit s = argmaxShape(op, x, y, attrs);
  FloatIn fx(x);
  auto *r = static_cast<int64_t *>(y.data);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const float *p = fx.data() + o * s.n * s.inner + i;
      int64_t best = 0;
      float m = p[0];
      for (int64_t j = 1; j < s.n && !std::isnan(m); ++j)
        if (p[j * s.inner] > m || std::isnan(p[j * s.inner]))
          m = p[j * s.inner], best = j;
      r[o * s.inner + i] = best;
    }
}

namespace {

// Calls f(k, offset) for every index element k with the input offset it
// picks; fails on an index outside the axis.
template <class F>
void forEachGather(std::string_view op, const GatherShape &s,
                   const TensorRef &index, F &&f) {
  std::vector<int64_t> ids = loadIds(op, index);
  int64_t xs[kMaxRank], idx[kMaxRank] = {};
  xs[s.rank - 1] = 1;
  for (int d = s.rank - 2; d >= 0; --d)
    xs[d] = xs[d + 1] * s.xDims[d + 1];
  for (size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] < 0 || ids[k] >= s.xDims[s.axis])
      fail(op, "index " + std::to_string(ids[k]) + " out of range");
    int64_t off = 0;
    for (int d = 0; d < s.rank; ++d)
      off += (d == s.axis ? ids[k] : idx[d]) * xs[d];
    f(int64_t(k), off);
    for (int d = s.rank - 1; d >= 0 && ++idx[d] == s.iDims[d]; --d)
      idx[d] = 0;
  }
}

} // namespace

void gatherKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs) {
  constexpr std::string_view op = "graph.gather";
  const TensorRef &x = required(op, in, 0), &index = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  GatherShape s = gatherShape(op, x, index, y, attrs);
  if (x.dtype != y.dtype)
    fail(op, "the result must have the input's element type");
  size_t bytes = dtypeSize(x.dtype);
  auto *src = static_cast<const unsigned char *>(x.data);
  auto *dst = static_cast<unsigned char *>(y.data);
  // A gather copies elements: no rounding.
  forEachGather(op, s, index, [&](int64_t k, int64_t off) {
    std::memcpy(dst + k * bytes, src + off * bytes, bytes);
  });
}

// Scatter-add in index order (deterministic), sums in float.
void gatherBackwardKernel(std::span<const TensorRef> in,
                          std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.gather_backward";
  const TensorRef &index = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  GatherShape s = gatherShape(op, dx, index, g, attrs);
  FloatIn fg(g);
  FloatOut d(dx, /*zeroed=*/true);
  forEachGather(op, s, index,
                [&](int64_t k, int64_t off) { d[off] += fg[k]; });
  d.commit();
}

// Running sums in float along the axis, from the end with `reverse`.
void cumsumKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs) {
  constexpr std::string_view op = "graph.cumsum";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  AxisSplit s = cumsumShape(op, x, y, attrs);
  bool reverse = attrs.getBool("reverse");
  FloatIn fx(x);
  FloatOut r(y);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      float run = 0.0f;
      for (int64_t jj = 0; jj < s.n; ++jj) {
        int64_t j = reverse ? s.n - 1 - jj : jj;
        int64_t k = (o * s.n + j) * s.inner + i;
        run += fx[k];
        r[k] = run;
      }
    }
  r.commit();
}

} // namespace ampc::cpu
