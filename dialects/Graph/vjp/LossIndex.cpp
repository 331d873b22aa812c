//===- LossIndex.cpp - VJPs of nll/bce losses, gather, cumsum -------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// Labels are integers: no cotangent. The input's cotangent is -g scattered
// to each row's label (nll_loss_backward, which also counts the rows).
SmallVector<Value> NllLossOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {NllLossBackwardOp::create(b, getLoc(), getInput().getType(),
                                    getLabels(), cotangents[0],
                                    getIgnoreIndexAttr(), getReductionAttr()),
          Value()};
}

// Per element, with lw = 1 + (pw - 1) t and ls = log_sigmoid(x):
// L = (1 - t) x - lw ls, so dx = lw sigmoid(x) - pw t (sigmoid(x) - t
// without pw, PyTorch's binary_cross_entropy_with_logits_backward),
// dt = -x - (pw - 1) ls and dpw = -t ls (summed over the broadcast). w is
// the per-element cotangent: g, broadcast g, or g / N for "mean".
SmallVector<Value>
BinaryCrossEntropyWithLogitsOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value x = getInput(), t = getTarget(), pw = getPosWeight();
  RankedTensorType xt = tensorType(x);
  Type et = xt.getElementType();
  Value w = cotangents[0];
  if (getReduction() == "mean")
    w = MulOp::create(b, loc, w,
                      scalar(b, loc, et, 1.0 / double(xt.getNumElements())));
  w = broadcastTo(b, loc, w, xt);
  Value sig = SigmoidOp::create(b, loc, xt, x);
  Value negX = NegOp::create(b, loc, xt, x);
  if (!pw) {
    Value dx = MulOp::create(b, loc, SubOp::create(b, loc, sig, t), w);
    return {dx, MulOp::create(b, loc, negX, w)};
  }
  Value pwb = broadcastTo(b, loc, pw, xt);
  Value one = scalar(b, loc, et, 1.0);
  Value pwm1 = SubOp::create(b, loc, pwb, one);
  Value lw = AddOp::create(b, loc, MulOp::create(b, loc, pwm1, t), one);
  Value dx = SubOp::create(b, loc, MulOp::create(b, loc, lw, sig),
                           MulOp::create(b, loc, pwb, t));
  // log_sigmoid(x) = -softplus(-x).
  Value ls = NegOp::create(b, loc, xt,
                           SoftplusOp::create(b, loc, xt, negX,
                                              b.getF64FloatAttr(1.0),
                                              b.getF64FloatAttr(20.0)));
  Value dt = SubOp::create(b, loc, negX, MulOp::create(b, loc, pwm1, ls));
  Value dpw = NegOp::create(b, loc, xt, MulOp::create(b, loc, t, ls));
  return {MulOp::create(b, loc, dx, w), MulOp::create(b, loc, dt, w),
          sumToType(b, loc, MulOp::create(b, loc, dpw, w), tensorType(pw))};
}

// The index is an integer: no cotangent. The input's is a scatter-add.
SmallVector<Value> GatherOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {GatherBackwardOp::create(b, getLoc(), getInput().getType(),
                                   getIndex(), cotangents[0], getAxisAttr()),
          Value()};
}

// The cotangent of a cumulative sum is the cumulative sum of g taken from
// the other end.
SmallVector<Value> CumsumOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {CumsumOp::create(b, getLoc(), getType(), cotangents[0],
                           getAxisAttr(),
                           getReverse() ? UnitAttr() : b.getUnitAttr())};
}

// cross_entropy with probability labels t [..., C] over N rows, smoothing
// e: t' = (1 - e) t + e / C, L = -sum t' log_softmax(z) / N, so
// dz = g / N (softmax(z) sum_c t' - t') and dt = -g (1 - e) / N
// log_softmax(z).
SmallVector<Value> vjp::softCrossEntropyVJP(OpBuilder &b, CrossEntropyOp op,
                                            Value g) {
  Location loc = op.getLoc();
  Value z = op.getLogits(), t = op.getLabels();
  RankedTensorType zt = tensorType(z);
  Type et = zt.getElementType();
  int64_t c = zt.getShape().back(), rank = zt.getRank();
  double e = op.getLabelSmoothing().convertToDouble();
  double n = double(zt.getNumElements()) / double(c);
  Value ts = t;
  if (e > 0.0)
    ts = AddOp::create(b, loc, MulOp::create(b, loc, t, scalar(b, loc, et, 1.0 - e)),
                       scalar(b, loc, et, e / double(c)));
  SmallVector<int64_t> kept(zt.getShape());
  kept.back() = 1;
  Value rowSum = ReduceSumOp::create(b, loc, zt.clone(kept), ts,
                                     b.getDenseI64ArrayAttr({rank - 1}),
                                     b.getBoolAttr(true));
  Value p = SoftmaxOp::create(b, loc, zt, z, b.getI64IntegerAttr(-1));
  Value coef = MulOp::create(b, loc, g, scalar(b, loc, et, 1.0 / n));
  Value dz = MulOp::create(
      b, loc, SubOp::create(b, loc, MulOp::create(b, loc, p, rowSum), ts),
      coef);
  Value lsm = LogSoftmaxOp::create(b, loc, zt, z, b.getI64IntegerAttr(-1));
  Value dt = MulOp::create(
      b, loc, lsm, MulOp::create(b, loc, g, scalar(b, loc, et, -(1.0 - e) / n)));
  return {dz, dt};
}
