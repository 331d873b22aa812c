//===- LossIndex.cpp - nll/bce losses, argmax, gather, cumsum -------------===//
//
// As PyTorch: nll_loss's mean divides by the number of non-ignored rows
// (0/0 = NaN when all are ignored). Sums accumulate like the kernels
// (Accum: FP32 under typed numerics), in element order.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "runtime/numerics/LossIndex.h"

#include <cmath>

using namespace ampc::interp;

namespace {

// Rows and classes of a class-index loss on |input| [..., C] and the label
// of each row, range-checked (|ignore| allowed).
mlir::LogicalResult checkLabels(const OpContext &ctx, llvm::StringRef op,
                                const Tensor &labels, int64_t classes,
                                int64_t ignore) {
  for (int64_t r = 0; r < labels.size(); ++r) {
    int64_t y = labels.i[r];
    if (y != ignore && (y < 0 || y >= classes))
      return ctx.error() << op << " label " << y << " at position " << r
                         << " is outside [0, " << classes << ")";
  }
  return mlir::success();
}

KernelResult nllLoss(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0], &labels = in[1];
  int64_t classes = x.shape.back(), ignore = ctx.getInt("ignore_index", -100);
  std::string reduction = ctx.getString("reduction", "mean");
  if (mlir::failed(checkLabels(ctx, "nll_loss", labels, classes, ignore)))
    return mlir::failure();
  Tensor out = ctx.makeResult();
  Accum total(ctx);
  int64_t count = 0;
  for (int64_t r = 0; r < labels.size(); ++r) {
    int64_t y = labels.i[r];
    double l = y == ignore ? 0.0 : -x.f[r * classes + y];
    count += y != ignore;
    if (reduction == "none")
      out.f[r] = l;
    else if (y != ignore)
      total.add(l);
  }
  if (reduction == "sum")
    out.f[0] = total.get();
  else if (reduction == "mean")
    out.f[0] = total.get() / double(count);
  return one(std::move(out));
}

// nll_loss_backward(labels, g) -> dinput: -g (/ count for "mean") at each
// counted row's label, 0 elsewhere.
KernelResult nllLossBackward(const OpContext &ctx,
                             std::span<const Tensor> in) {
  const Tensor &labels = in[0], &g = in[1];
  Tensor out = ctx.makeResult();
  int64_t classes = out.shape.back(), ignore = ctx.getInt("ignore_index", -100);
  std::string reduction = ctx.getString("reduction", "mean");
  if (mlir::failed(
          checkLabels(ctx, "nll_loss_backward", labels, classes, ignore)))
    return mlir::failure();
  int64_t count = 0;
  for (int64_t r = 0; r < labels.size(); ++r)
    count += labels.i[r] != ignore;
  for (int64_t r = 0; r < labels.size(); ++r) {
    int64_t y = labels.i[r];
    if (y == ignore)
      continue;
    double w = reduction == "none"   ? g.f[r]
               : reduction == "mean" ? g.f[0] / double(count)
                                     : g.f[0];
    out.f[r * classes + y] = -w;
  }
  return one(std::move(out));
}

} // namespace

namespace {

// binary_cross_entropy_with_logits: per-element losses (numerics/LossIndex.h)
// summed in element order; pos_weight broadcast over the last dimensions.
KernelResult bceWithLogits(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0], &t = in[1];
  const Tensor *pw = in.size() > 2 ? &in[2] : nullptr;
  std::string reduction = ctx.getString("reduction", "mean");
  Tensor out = ctx.makeResult();
  Accum total(ctx);
  int64_t n = x.size(), pwn = pw ? pw->size() : 1;
  for (int64_t k = 0; k < n; ++k) {
    double w = pw ? pw->f[pwn == 1 ? 0 : k % pwn] : 1.0;
    double l = ampc::num::bceWithLogits(x.f[k], t.f[k], w);
    if (reduction == "none")
      out.f[k] = l;
    else
      total.add(l);
  }
  if (reduction == "sum")
    out.f[0] = total.get();
  else if (reduction == "mean")
    out.f[0] = total.get() / double(n);
  return one(std::move(out));
}

// |x| as [outer, n, inner] around |axis|.
struct Split {
  int64_t outer = 1, n = 1, inner = 1;
  Split(const Shape &shape, int64_t axis) {
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      (d < axis ? outer : d == axis ? n : inner) *= shape[d];
  }
};

// First index of the maximum; a NaN wins (torch.argmax).
KernelResult argmax(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0];
  Split s(x.shape, normAxis(ctx.getInt("axis", 0), x.rank()));
  Tensor out = ctx.makeResult();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t best = 0;
      double m = x.f[o * s.n * s.inner + i];
      for (int64_t j = 1; j < s.n && !std::isnan(m); ++j) {
        double v = x.f[(o * s.n + j) * s.inner + i];
        if (v > m || std::isnan(v))
          m = v, best = j;
      }
      out.i[o * s.inner + i] = best;
    }
  return one(std::move(out));
}

// The input offset that index element |k| of |index| picks (or, backward,
// accumulates into) along |axis| of |shape|; fails on an index out of range.
mlir::FailureOr<std::vector<int64_t>>
gatherOffsets(const OpContext &ctx, llvm::StringRef op, const Tensor &index,
              const Shape &shape, int64_t axis) {
  std::vector<int64_t> offsets(index.size());
  Shape strides = stridesOf(shape);
  std::vector<int64_t> idx(index.shape.size(), 0);
  for (int64_t k = 0; k < index.size(); ++k, nextIndex(idx, index.shape)) {
    int64_t v = index.i[k];
    if (v < 0 || v >= shape[axis]) {
      ctx.error() << op << " index " << v << " at position " << k
                  << " is outside [0, " << shape[axis] << ")";
      return mlir::failure();
    }
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += (int64_t(d) == axis ? v : idx[d]) * strides[d];
    offsets[k] = off;
  }
  return offsets;
}

KernelResult gather(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0], &index = in[1];
  auto offsets = gatherOffsets(ctx, "gather", index, x.shape,
                               normAxis(ctx.getInt("axis", 0), x.rank()));
  if (mlir::failed(offsets))
    return mlir::failure();
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < index.size(); ++k)
    out.f[k] = x.f[(*offsets)[k]];
  return one(std::move(out));
}

// Scatter-add in index order, accumulated like the kernels.
KernelResult gatherBackward(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &index = in[0], &g = in[1];
  Tensor out = ctx.makeResult();
  auto offsets =
      gatherOffsets(ctx, "gather_backward", index, out.shape,
                    normAxis(ctx.getInt("axis", 0), out.rank()));
  if (mlir::failed(offsets))
    return mlir::failure();
  for (int64_t k = 0; k < index.size(); ++k)
    accumulate(ctx, out.f[(*offsets)[k]], g.f[k]);
  return one(std::move(out));
}

KernelResult cumsum(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &x = in[0];
  Split s(x.shape, normAxis(ctx.getInt("axis", 0), x.rank()));
  bool reverse = ctx.getFlag("reverse");
  Tensor out = ctx.makeResult();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      Accum run(ctx);
      for (int64_t jj = 0; jj < s.n; ++jj) {
        int64_t j = reverse ? s.n - 1 - jj : jj;
        int64_t k = (o * s.n + j) * s.inner + i;
        run.add(x.f[k]);
        out.f[k] = run.get();
      }
    }
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerLossIndexKernels(KernelTable &t) {
  t["graph.nll_loss"] = nllLoss;
  t["graph.nll_loss_backward"] = nllLossBackward;
  t["graph.binary_cross_entropy_with_logits"] = bceWithLogits;
  t["graph.argmax"] = argmax;
  t["graph.gather"] = gather;
  t["graph.gather_backward"] = gatherBackward;
  t["graph.cumsum"] = cumsum;
}
