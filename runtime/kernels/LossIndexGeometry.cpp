//===- LossIndexGeometry.cpp - Checks of nll/bce, argmax, gather, cumsum --===//
#include "runtime/kernels/LossIndexGeometry.h"

namespace ampc::kernels::detail {

Reduction reductionOf(std::string_view op, const Attrs &attrs) {
  std::string r = attrs.getString("reduction", "mean");
  if (r == "mean")
    return Reduction::Mean;
  if (r == "sum")
    return Reduction::Sum;
  if (r != "none")
    fail(op, "reduction must be mean, sum or none");
  return Reduction::None;
}

namespace {

NllShape nllShape(std::string_view op, const TensorRef &labels,
                  const TensorRef &classAxis, const Attrs &attrs) {
  if (classAxis.rank < 1)
    fail(op, "the input must be [..., C]");
  if (labels.dtype != DType::I32 && labels.dtype != DType::I64)
    fail(op, "labels must be i32 or i64");
  NllShape s{labels.numel(), classAxis.shape[classAxis.rank - 1],
             attrs.getInt("ignore_index", -100), reductionOf(op, attrs)};
  if (s.rows * s.classes != classAxis.numel())
    fail(op, "labels must have the input's shape without the class axis");
  return s;
}

} // namespace

NllShape nllLossShape(std::string_view op, const TensorRef &input,
                      const TensorRef &labels, const TensorRef &y,
                      const Attrs &attrs) {
  NllShape s = nllShape(op, labels, input, attrs);
  if (y.numel() != (s.reduction == Reduction::None ? s.rows : 1))
    fail(op, "the result is a scalar, or the labels' shape for reduction "
             "none");
  return s;
}

NllShape nllLossBackwardShape(std::string_view op, const TensorRef &labels,
                              const TensorRef &g, const TensorRef &dinput,
                              const Attrs &attrs) {
  NllShape s = nllShape(op, labels, dinput, attrs);
  if (g.numel() != (s.reduction == Reduction::None ? s.rows : 1))
    fail(op, "g is a scalar, or the labels' shape for reduction none");
  return s;
}

} // namespace ampc::kernels::detail

namespace ampc::kernels::detail {

BceShape bceShape(std::string_view op, const TensorRef &x, const TensorRef &t,
                  const TensorRef *posWeight, const TensorRef &y,
                  const Attrs &attrs) {
  BceShape s{x.numel(), 0, reductionOf(op, attrs)};
  if (t.numel() != s.n ||
      y.numel() != (s.reduction == Reduction::None ? s.n : 1))
    fail(op, "input and target must have equal sizes; the result is a scalar "
             "unless reduction is none");
  if (posWeight) {
    s.weights = posWeight->numel();
    int64_t c = x.rank ? x.shape[x.rank - 1] : 1;
    if (s.weights != 1 && s.weights != c)
      fail(op, "pos_weight must be [C] or [1] for an input [..., C]");
  }
  return s;
}

SoftCeShape softCrossEntropyShape(std::string_view op, const TensorRef &logits,
                                  const TensorRef &t, const TensorRef &y,
                                  const Attrs &attrs) {
  if (logits.rank < 1)
    fail(op, "logits must be [..., C]");
  if (t.numel() != logits.numel() || y.numel() != 1)
    fail(op, "probability labels must have the logits' shape; the result "
             "is a scalar");
  int64_t c = logits.shape[logits.rank - 1];
  return {c ? logits.numel() / c : 0, c,
          attrs.getFloat("label_smoothing", 0.0)};
}

namespace {
AxisSplit splitAt(std::string_view op, const TensorRef &x, const Attrs &attrs) {
  int64_t axis = normAxis(op, attrs.getInt("axis"), x.rank);
  AxisSplit s{1, x.shape[axis], 1};
  for (int d = 0; d < x.rank; ++d)
    if (d < axis)
      s.outer *= x.shape[d];
    else if (d > axis)
      s.inner *= x.shape[d];
  return s;
}
} // namespace

AxisSplit argmaxShape(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs) {
  AxisSplit s = splitAt(op, x, attrs);
  if (s.n == 0)
    fail(op, "argmax of an empty axis");
  if (y.dtype != DType::I64 || y.numel() != s.outer * s.inner)
    fail(op, "the result is i64 with the input's shape without the axis");
  return s;
}

AxisSplit cumsumShape(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs) {
  if (y.numel() != x.numel())
    fail(op, "the result must have the input's size");
  return splitAt(op, x, attrs);
}

GatherShape gatherShape(std::string_view op, const TensorRef &x,
                        const TensorRef &index, const TensorRef &g,
                        const Attrs &attrs) {
  if (index.dtype != DType::I32 && index.dtype != DType::I64)
    fail(op, "index must be i32 or i64");
  if (index.rank != x.rank || g.numel() != index.numel() || x.rank < 1)
    fail(op, "index must have the input's rank, and the gathered values "
             "the index's shape");
  GatherShape s{x.rank, normAxis(op, attrs.getInt("axis"), x.rank), {}, {}};
  for (int d = 0; d < x.rank; ++d) {
    s.xDims[d] = x.shape[d];
    s.iDims[d] = index.shape[d];
    if (d != s.axis && s.iDims[d] > s.xDims[d])
      fail(op, "the index may not be larger than the input off the axis");
  }
  return s;
}

} // namespace ampc::kernels::detail
