//===- Loss.cpp - VJPs of the losses --------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// Labels are integers: no cotangent. The logits' cotangent needs the
// softmax and the count of non-ignored labels: cross_entropy_backward.
SmallVector<Value> CrossEntropyOp::buildVJP(OpBuilder &b,
                                            ValueRange cotangents) {
  return {CrossEntropyBackwardOp::create(
              b, getLoc(), getLogits().getType(), getLogits(), getLabels(),
              cotangents[0], getIgnoreIndexAttr(), getLabelSmoothingAttr()),
          Value()};
}

// L = mean((x - t)^2) over N elements: dx = g * 2 / N * (x - t), dt = -dx.
SmallVector<Value> MseLossOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  RankedTensorType xt = tensorType(getInput());
  double n = double(xt.getNumElements());
  Value s = MulOp::create(b, loc, cotangents[0],
                          scalar(b, loc, xt.getElementType(), 2.0 / n));
  Value d = SubOp::create(b, loc, getInput(), getTarget());
  Value dx = MulOp::create(b, loc, d, s);
  return {dx, NegOp::create(b, loc, xt, dx)};
}
