//===- Reduction.cpp - reduce_sum/mean/max and reduce_max_backward ---------===//
//
// Sums accumulate in FP32 under typed numerics, in input order.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"

#include <cmath>

using namespace ampc::interp;

namespace {

// The input shape with reduced axes set to 1: the flat layout of the result
// whether or not keepdim is set. Empty axes reduce everything.
mlir::FailureOr<Shape> keptShape(const OpContext &ctx, const Shape &in) {
  Shape kept = in;
  std::vector<int64_t> axes = ctx.getInts("axes", {});
  if (axes.empty())
    std::fill(kept.begin(), kept.end(), 1);
  for (int64_t a : axes) {
    int64_t n = normAxis(a, int64_t(in.size()));
    if (n < 0)
      return ctx.error() << "reduction axis " << a << " out of range";
    kept[n] = 1;
  }
  return kept;
}

// Calls f(input flat index, output flat index) over the input in order.
template <typename F> void forReduce(const Shape &in, const Shape &kept, F f) {
  if (numElements(in) == 0)
    return;
  std::vector<int64_t> idx(in.size(), 0);
  int64_t k = 0;
  do {
    f(k++, broadcastIndex(kept, in, idx));
  } while (nextIndex(idx, in));
}

template <bool Mean>
KernelResult reduceSum(const OpContext &ctx, std::span<const Tensor> in) {
  auto kept = keptShape(ctx, in[0].shape);
  if (mlir::failed(kept))
    return mlir::failure();
  Tensor out = ctx.makeResult();
  forReduce(in[0].shape, *kept, [&](int64_t i, int64_t o) {
    accumulate(ctx, out.f[o], in[0].f[i]);
  });
  if (Mean) {
    double n = double(in[0].size()) / double(std::max<int64_t>(out.size(), 1));
    for (double &v : out.f)
      v /= n;
  }
  return one(std::move(out));
}

KernelResult reduceMax(const OpContext &ctx, std::span<const Tensor> in) {
  auto kept = keptShape(ctx, in[0].shape);
  if (mlir::failed(kept))
    return mlir::failure();
  Tensor out = ctx.makeResult();
  std::fill(out.f.begin(), out.f.end(), -INFINITY);
  forReduce(in[0].shape, *kept, [&](int64_t i, int64_t o) {
    out.f[o] = std::max(out.f[o], in[0].f[i]);
  });
  return one(std::move(out));
}

// reduce_max_backward(x, g): g shared evenly among the tied maxima.
KernelResult reduceMaxBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  auto kept = keptShape(ctx, in[0].shape);
  if (mlir::failed(kept))
    return mlir::failure();
  const Tensor &x = in[0], &g = in[1];
  std::vector<double> m(g.size(), -INFINITY), count(g.size(), 0.0);
  forReduce(x.shape, *kept,
            [&](int64_t i, int64_t o) { m[o] = std::max(m[o], x.f[i]); });
  forReduce(x.shape, *kept, [&](int64_t i, int64_t o) {
    if (x.f[i] == m[o])
      count[o] += 1;
  });
  Tensor out = ctx.makeResult();
  forReduce(x.shape, *kept, [&](int64_t i, int64_t o) {
    out.f[i] = x.f[i] == m[o] ? g.f[o] / count[o] : 0.0;
  });
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerReductionKernels(KernelTable &t) {
  t["graph.reduce_sum"] = reduceSum<false>;
  t["graph.reduce_mean"] = reduceSum<true>;
  t["graph.reduce_max"] = reduceMax;
  t["graph.reduce_max_backward"] = reduceMaxBackward;
}
