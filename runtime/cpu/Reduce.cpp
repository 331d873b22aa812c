//===- Reduce.cpp - reduce_sum, reduce_mean, reduce_max and backward ------===//
//
// Sums accumulate in float, in the input's row-major order (deterministic).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// The reduction of |x| to |y| per `axes` (empty: all) and `keepdim`.
struct Reduction {
  int64_t ostride[kMaxRank]; // output stride per input dim, 0 when reduced
  int64_t count = 1;         // elements per output
};

// The shared checks and reduced axes (runtime/kernels/Geometry.h).
Reduction reduction(std::string_view op, const TensorRef &x,
                    const TensorRef &y, const Attrs &attrs,
                    const TensorRef *dx = nullptr) {
  ReduceAxes axes = reduceAxes(op, x, y, attrs, dx);
  Reduction r;
  r.count = axes.count;
  int64_t acc = 1;
  for (int d = x.rank - 1; d >= 0; --d) {
    r.ostride[d] = axes.reduced[d] ? 0 : acc;
    if (!axes.reduced[d])
      acc *= x.shape[d];
  }
  return r;
}

// Calls f(inIndex, outIndex) over |x| in row-major order.
template <class F> void forEachReduce(const TensorRef &x, const Reduction &r, F f) {
  int64_t total = x.numel();
  if (total == 0)
    return;
  if (x.rank == 0) {
    f(0, 0);
    return;
  }
  int rank = x.rank;
  int64_t idx[kMaxRank] = {};
  int64_t inner = x.shape[rank - 1], is = r.ostride[rank - 1], o = 0;
  for (int64_t i = 0; i < total; i += inner) {
    for (int64_t j = 0; j < inner; ++j)
      f(i + j, o + j * is);
    for (int d = rank - 2; d >= 0; --d) {
      o += r.ostride[d];
      if (++idx[d] < x.shape[d])
        break;
      o -= r.ostride[d] * x.shape[d];
      idx[d] = 0;
    }
  }
}

// Adds rows x[l * len, (l + 1) * len) of L rows into y[o[l]], each row one
// sequential float sum continued from y's value: the same additions in the
// same order as one element at a time, with L independent chains in flight
// (a single chain waits on each add's latency).
template <int L>
void sumRows(const float *x, int64_t len, const int64_t *o, float *y) {
  float acc[L];
  for (int l = 0; l < L; ++l)
    acc[l] = y[o[l]];
  for (int64_t j = 0; j < len; ++j)
    for (int l = 0; l < L; ++l)
      acc[l] += x[l * len + j];
  for (int l = 0; l < L; ++l)
    y[o[l]] = acc[l];
}

// The sum where the trailing dimensions are reduced (a bias gradient over
// [N, C, H, W]): x is rows of contiguous runs, each run summing into one
// output. Up to eight consecutive rows with distinct outputs are summed
// together; every output still receives its elements in row-major order,
// so the result is forEachReduce's to the bit. False when the last
// dimension is kept (that loop already runs along independent outputs).
bool sumTrailingRuns(const TensorRef &x, const Reduction &r, const float *px,
                     float *py) {
  int split = x.rank;
  while (split > 0 && r.ostride[split - 1] == 0)
    --split;
  if (split == x.rank || x.numel() == 0)
    return false;
  int64_t len = 1, rows = 1;
  for (int d = split; d < x.rank; ++d)
    len *= x.shape[d];
  for (int d = 0; d < split; ++d)
    rows *= x.shape[d];
  // Each row's output, by an odometer over the leading dimensions.
  std::vector<int64_t> out(static_cast<size_t>(rows));
  int64_t idx[kMaxRank] = {}, o = 0;
  for (int64_t row = 0; row < rows; ++row) {
    out[size_t(row)] = o;
    for (int d = split - 1; d >= 0; --d) {
      o += r.ostride[d];
      if (++idx[d] < x.shape[d])
        break;
      o -= r.ostride[d] * x.shape[d];
      idx[d] = 0;
    }
  }
  constexpr int64_t kLanes = 8;
  for (int64_t r0 = 0; r0 < rows;) {
    const int64_t *group = out.data() + r0;
    int64_t k = 1;
    while (k < kLanes && r0 + k < rows &&
           std::find(group, group + k, group[k]) == group + k)
      ++k;
    if (k == kLanes)
      sumRows<kLanes>(px + r0 * len, len, group, py);
    else
      for (int64_t l = 0; l < k; ++l)
        sumRows<1>(px + (r0 + l) * len, len, group + l, py);
    r0 += k;
  }
  return true;
}

template <bool Mean>
void reduceSum(std::string_view op, std::span<const TensorRef> in,
               std::span<const TensorRef> out, const Attrs &attrs) {
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  Reduction r = reduction(op, x, y, attrs);
  FloatIn fx(x);
  FloatOut fy(y, /*zeroed=*/true);
  float *py = fy.data();
  const float *px = fx.data();
  if (!sumTrailingRuns(x, r, px, py))
    forEachReduce(x, r, [&](int64_t i, int64_t o) { py[o] += px[i]; });
  if (Mean)
    for (int64_t o = 0, n = y.numel(); o < n; ++o)
      py[o] /= float(r.count);
  fy.commit();
}

// Max with NaN propagation (torch.amax); -inf for empty reductions.
std::vector<float> maxima(const TensorRef &x, const TensorRef &y,
                          const Reduction &r, const float *px) {
  std::vector<float> m(size_t(y.numel()), -INFINITY);
  forEachReduce(x, r, [&](int64_t i, int64_t o) {
    float v = px[i];
    if (v > m[o] || std::isnan(v))
      m[o] = v;
  });
  return m;
}

} // namespace

void reduceSumKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  reduceSum<false>("graph.reduce_sum", in, out, attrs);
}
void reduceMeanKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs) {
  reduceSum<true>("graph.reduce_mean", in, out, attrs);
}

void reduceMaxKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.reduce_max";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  Reduction r = reduction(op, x, y, attrs);
  FloatIn fx(x);
  std::vector<float> m = maxima(x, y, r, fx.data());
  narrow(m.data(), y);
}

// in: x, g (reduced shape); out: dx. g is shared evenly among the elements
// equal to the maximum: dx = g / count there (torch.amax's backward).
void reduceMaxBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.reduce_max_backward";
  const TensorRef &x = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  Reduction r = reduction(op, x, g, attrs, &dx);
  FloatIn fx(x), fg(g);
  const float *px = fx.data();
  std::vector<float> m = maxima(x, g, r, px);
  std::vector<float> count(m.size(), 0.0f);
  forEachReduce(x, r, [&](int64_t i, int64_t o) {
    if (px[i] == m[o])
      count[o] += 1.0f;
  });
  for (size_t o = 0; o < m.size(); ++o)
    count[o] = fg[int64_t(o)] / count[o]; // the share per tied maximum
  FloatOut fdx(dx);
  forEachReduce(x, r, [&](int64_t i, int64_t o) {
    fdx[i] = px[i] == m[o] ? count[o] : 0.0f;
  });
  fdx.commit();
}

} // namespace ampc::cpu
