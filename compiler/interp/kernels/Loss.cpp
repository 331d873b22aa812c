//===- Loss.cpp - cross_entropy, its backward, mse_loss --------------------===//
//
// cross_entropy follows PyTorch (class indices, mean reduction):
//   row loss = (1 - eps) * -log p[y] + eps * mean_c(-log p[c])
//   loss     = sum over rows with y != ignore_index / number of such rows
// (0/0 = NaN when every row is ignored, as in PyTorch).
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"
#include "runtime/numerics/Elementwise.h"

#include <cmath>

using namespace ampc::interp;

namespace {

struct CeSpec {
  int64_t rows, classes, ignore;
  double smoothing;
  CeSpec(const OpContext &ctx, const Tensor &logits)
      : classes(logits.shape.empty() ? 1 : logits.shape.back()),
        ignore(ctx.getInt("ignore_index", -100)),
        smoothing(ctx.getFloat("label_smoothing", 0.0)) {
    rows = classes ? logits.size() / classes : 0;
  }
};

mlir::LogicalResult checkLabel(const OpContext &ctx, const CeSpec &s,
                               int64_t r, int64_t y) {
  if (y != s.ignore && (y < 0 || y >= s.classes))
    return ctx.error() << "cross_entropy label " << y << " at position " << r
                       << " is outside [0, " << s.classes << ")";
  return mlir::success();
}

// log(sum(exp(z))) of one row, stably.
double logSumExp(const double *z, int64_t c) {
  double m = -INFINITY, s = 0;
  for (int64_t j = 0; j < c; ++j)
    m = std::max(m, z[j]);
  for (int64_t j = 0; j < c; ++j)
    s += std::exp(z[j] - m);
  return m + std::log(s);
}

// Probability labels t: row loss = -sum_c t'_c (z_c - lse), t' = (1 - e) t
// + e / C, averaged over every row (PyTorch).
KernelResult softCrossEntropy(const OpContext &ctx, const Tensor &logits,
                              const Tensor &t) {
  CeSpec s(ctx, logits);
  Accum total(ctx);
  for (int64_t r = 0; r < s.rows; ++r) {
    const double *z = logits.f.data() + r * s.classes;
    const double *p = t.f.data() + r * s.classes;
    double lse = logSumExp(z, s.classes), row = 0;
    for (int64_t j = 0; j < s.classes; ++j)
      row -= ((1.0 - s.smoothing) * p[j] + s.smoothing / double(s.classes)) *
             (z[j] - lse);
    total.add(row);
  }
  Tensor out = ctx.makeResult();
  out.f[0] = total.get() / double(s.rows);
  return one(std::move(out));
}

KernelResult crossEntropy(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &logits = in[0], &labels = in[1];
  if (labels.isFloat())
    return softCrossEntropy(ctx, logits, labels);
  CeSpec s(ctx, logits);
  Accum total(ctx);
  int64_t count = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    int64_t y = labels.i[r];
    if (mlir::failed(checkLabel(ctx, s, r, y)))
      return mlir::failure();
    if (y == s.ignore)
      continue;
    const double *z = logits.f.data() + r * s.classes;
    double lse = logSumExp(z, s.classes), nll = lse - z[y], smooth = 0;
    for (int64_t j = 0; j < s.classes; ++j)
      smooth += lse - z[j];
    total.add((1.0 - s.smoothing) * nll +
              s.smoothing * smooth / double(s.classes));
    ++count;
  }
  Tensor out = ctx.makeResult();
  out.f[0] = total.get() / double(count);
  return one(std::move(out));
}

// cross_entropy_backward(logits, labels, g) -> dlogits:
//   g * (softmax - ((1 - eps) onehot(y) + eps / C)) / count, 0 on ignored rows.
// |k|: the op's result that dlogits is (1 for cross_entropy_with_grad).
mlir::FailureOr<Tensor> ceGradient(const OpContext &ctx,
                                   std::span<const Tensor> in, unsigned k) {
  const Tensor &logits = in[0], &labels = in[1];
  double g = in[2].f[0];
  CeSpec s(ctx, logits);
  int64_t count = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    if (mlir::failed(checkLabel(ctx, s, r, labels.i[r])))
      return mlir::failure();
    count += labels.i[r] != s.ignore;
  }
  Tensor out = ctx.makeResult(k);
  for (int64_t r = 0; r < s.rows; ++r) {
    int64_t y = labels.i[r];
    if (y == s.ignore)
      continue;
    const double *z = logits.f.data() + r * s.classes;
    double lse = logSumExp(z, s.classes);
    for (int64_t j = 0; j < s.classes; ++j) {
      double target =
          (j == y ? 1.0 - s.smoothing : 0.0) + s.smoothing / double(s.classes);
      out.f[r * s.classes + j] =
          g * (std::exp(z[j] - lse) - target) / double(count);
    }
  }
  return out;
}

KernelResult crossEntropyBackward(const OpContext &ctx,
                                  std::span<const Tensor> in) {
  mlir::FailureOr<Tensor> d = ceGradient(ctx, in, 0);
  if (mlir::failed(d))
    return mlir::failure();
  return one(std::move(*d));
}

// cross_entropy_with_grad(logits, labels, g) -> (loss, dlogits): the two
// ops' values (graph-fuse-cross-entropy).
KernelResult crossEntropyWithGrad(const OpContext &ctx,
                                  std::span<const Tensor> in) {
  KernelResult loss = crossEntropy(ctx, in.first(2));
  if (mlir::failed(loss))
    return loss;
  mlir::FailureOr<Tensor> d = ceGradient(ctx, in, 1);
  if (mlir::failed(d))
    return mlir::failure();
  return several(std::move((*loss)[0]), std::move(*d));
}

KernelResult mseLoss(const OpContext &ctx, std::span<const Tensor> in) {
  Accum total(ctx);
  for (int64_t k = 0; k < in[0].size(); ++k) {
    double d = in[0].f[k] - in[1].f[k];
    total.add(d * d);
  }
  Tensor out = ctx.makeResult();
  out.f[0] = total.get() / double(in[0].size());
  return one(std::move(out));
}

// l1 / smooth_l1 / huber: per-element losses, summed (accumulated like the
// kernels) for "sum" and "mean".
template <ampc::num::RegressionLoss Kind>
KernelResult regressionLoss(const OpContext &ctx, std::span<const Tensor> in) {
  double p = Kind == ampc::num::RegressionLoss::Huber
                 ? ctx.getFloat("delta", 1.0)
                 : ctx.getFloat("beta", 1.0);
  std::string reduction = ctx.getString("reduction", "mean");
  Tensor out = ctx.makeResult();
  Accum total(ctx);
  for (int64_t k = 0; k < in[0].size(); ++k) {
    double l = ampc::num::regressionLoss(Kind, in[0].f[k] - in[1].f[k], p);
    if (reduction == "none")
      out.f[k] = l;
    else
      total.add(l);
  }
  if (reduction == "sum")
    out.f[0] = total.get();
  else if (reduction == "mean")
    out.f[0] = total.get() / double(in[0].size());
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerLossKernels(KernelTable &t) {
  t["graph.cross_entropy"] = crossEntropy;
  t["graph.cross_entropy_backward"] = crossEntropyBackward;
  t["graph.cross_entropy_with_grad"] = crossEntropyWithGrad;
  t["graph.mse_loss"] = mseLoss;
  t["graph.l1_loss"] = regressionLoss<ampc::num::RegressionLoss::L1>;
  t["graph.smooth_l1_loss"] =
      regressionLoss<ampc::num::RegressionLoss::SmoothL1>;
  t["graph.huber_loss"] = regressionLoss<ampc::num::RegressionLoss::Huber>;
}
