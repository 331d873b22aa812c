//===- LossIndexGeometry.h - Checks of nll/bce, argmax, gather, cumsum -*- C++ -*-===//
//
// Operand checks and geometry of nll_loss, binary_cross_entropy_with_logits,
// argmax, gather and cumsum (and their backward ops), shared by the CPU and
// CUDA kernel libraries like Geometry.h (plain host C++, plain-data structs).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_LOSSINDEXGEOMETRY_H
#define AMPC_RUNTIME_KERNELS_LOSSINDEXGEOMETRY_H

#include "runtime/kernels/Geometry.h"

namespace ampc::kernels::detail {

// The `reduction` attribute ("mean" by default); fails on other strings.
Reduction reductionOf(std::string_view op, const Attrs &attrs);

// nll_loss input [..., C], labels [...] (i32/i64) -> y (a scalar, or the
// labels' shape for "none"); nll_loss_backward labels, g -> dinput
// [..., C]. Label values are not checked here (they may be on the device).
struct NllShape {
  int64_t rows, classes, ignore;
  Reduction reduction;
};
NllShape nllLossShape(std::string_view op, const TensorRef &input,
                      const TensorRef &labels, const TensorRef &y,
                      const Attrs &attrs);
NllShape nllLossBackwardShape(std::string_view op, const TensorRef &labels,
                              const TensorRef &g, const TensorRef &dinput,
                              const Attrs &attrs);

// binary_cross_entropy_with_logits x, t [, pos_weight [C] or [1]] -> y (a
// scalar, or x's shape for "none"): the element count, the pos_weight
// count (0 without one; element k takes weight k % count) and the reduction.
struct BceShape {
  int64_t n, weights;
  Reduction reduction;
};
BceShape bceShape(std::string_view op, const TensorRef &x, const TensorRef &t,
                  const TensorRef *posWeight, const TensorRef &y,
                  const Attrs &attrs);

// cross_entropy with probability labels (t: the logits' shape, a float
// type) -> scalar y.
struct SoftCeShape {
  int64_t rows, classes;
  double smoothing;
};
SoftCeShape softCrossEntropyShape(std::string_view op, const TensorRef &logits,
                                  const TensorRef &t, const TensorRef &y,
                                  const Attrs &attrs);

// argmax / cumsum: x as [outer, n, inner] around the required `axis`.
// argmax checks y (i64, x without the axis); cumsum y with x's size.
AxisSplit argmaxShape(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs);
AxisSplit cumsumShape(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs);

// gather x, index -> y (index's shape); gather_backward index, g -> dx
// (x's shape). |x| is the gathered-from tensor in both. Index values are
// not checked here.
struct GatherShape {
  int rank;
  int64_t axis;
  int64_t xDims[kMaxRank], iDims[kMaxRank];
};
GatherShape gatherShape(std::string_view op, const TensorRef &x,
                        const TensorRef &index, const TensorRef &g,
                        const Attrs &attrs);

} // namespace ampc::kernels::detail

#endif
