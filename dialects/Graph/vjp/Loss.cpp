//===- Loss.cpp - VJPs of the losses --------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// Labels are integers: no cotangent. The logits' cotangent needs the
// softmax and the count of non-ignored labels: cross_entropy_backward.
SmallVector<Value> CrossEntropyOp::buildVJP(OpBuilder &b,
                                            ValueRange cotangents) {
  if (isa<FloatType>(tensorType(getLabels()).getElementType()))
    return softCrossEntropyVJP(b, *this, cotangents[0]);
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

// The regression losses, with z = input - target and w the cotangent of each
// element's loss (g itself for "none", g broadcast for "sum", g / N for
// "mean"): dinput = w * f'(z), dtarget = -dinput. f' is sgn(z) for l1
// (exact, as relu_backward(z, w) - relu_backward(-z, w)), clamp(z / beta,
// -1, 1) for smooth_l1 and clamp(z, -delta, delta) for huber (PyTorch's
// smooth_l1_loss_backward / huber_loss_backward, inclusive at the kinks).
static SmallVector<Value>
regressionVJP(OpBuilder &b, Location loc, Value input, Value target,
              StringRef reduction, Value g,
              function_ref<Value(Value z, Value w)> derivTimes) {
  RankedTensorType xt = tensorType(input);
  Type et = xt.getElementType();
  Value w = g;
  if (reduction == "mean")
    w = MulOp::create(b, loc, g,
                      scalar(b, loc, et, 1.0 / double(xt.getNumElements())));
  w = broadcastTo(b, loc, w, xt);
  Value z = SubOp::create(b, loc, input, target);
  Value dx = derivTimes(z, w);
  return {dx, NegOp::create(b, loc, xt, dx)};
}

static Value signTimes(OpBuilder &b, Location loc, Value z, Value w) {
  auto t = tensorType(z);
  Value pos = ReluBackwardOp::create(b, loc, t, z, w);
  Value neg = ReluBackwardOp::create(b, loc, t, NegOp::create(b, loc, t, z), w);
  return SubOp::create(b, loc, pos, neg);
}

SmallVector<Value> L1LossOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  return regressionVJP(b, loc, getInput(), getTarget(), getReduction(),
                       cotangents[0], [&](Value z, Value w) {
                         return signTimes(b, loc, z, w);
                       });
}

SmallVector<Value> SmoothL1LossOp::buildVJP(OpBuilder &b,
                                            ValueRange cotangents) {
  Location loc = getLoc();
  double beta = getBeta().convertToDouble();
  return regressionVJP(
      b, loc, getInput(), getTarget(), getReduction(), cotangents[0],
      [&](Value z, Value w) -> Value {
        if (beta == 0.0)
          return signTimes(b, loc, z, w);
        auto t = tensorType(z);
        Value r = DivOp::create(b, loc, z,
                                scalar(b, loc, t.getElementType(), beta));
        Value c = ClampOp::create(b, loc, t, r, b.getF64FloatAttr(-1.0),
                                  b.getF64FloatAttr(1.0));
        return MulOp::create(b, loc, c, w);
      });
}

SmallVector<Value> HuberLossOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  double delta = getDelta().convertToDouble();
  return regressionVJP(b, loc, getInput(), getTarget(), getReduction(),
                       cotangents[0], [&](Value z, Value w) -> Value {
                         auto t = tensorType(z);
                         Value c = ClampOp::create(
                             b, loc, t, z, b.getF64FloatAttr(-delta),
                             b.getF64FloatAttr(delta));
                         return MulOp::create(b, loc, c, w);
                       });
}
