//===- Normalization.cpp - VJPs of softmax, log_softmax and the norms -----===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// |v| summed along |axis|, keeping it as size 1 (so it broadcasts back).
static Value sumKeep(OpBuilder &b, Location loc, Value v, int64_t axis) {
  RankedTensorType t = tensorType(v);
  if (axis < 0)
    axis += t.getRank();
  SmallVector<int64_t> shape(t.getShape());
  shape[axis] = 1;
  return ReduceSumOp::create(b, loc, t.clone(shape), v,
                             b.getDenseI64ArrayAttr({axis}),
                             b.getBoolAttr(true));
}

// y = softmax(x): dx = y * (g - sum(g * y)) along the axis.
SmallVector<Value> SoftmaxOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0], y = getResult();
  Value s = sumKeep(b, loc, MulOp::create(b, loc, g, y),
                   static_cast<int64_t>(getAxis()));
  return {MulOp::create(b, loc, y, SubOp::create(b, loc, g, s))};
}

// y = log_softmax(x): dx = g - exp(y) * sum(g) along the axis.
SmallVector<Value> LogSoftmaxOp::buildVJP(OpBuilder &b,
                                          ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value s = sumKeep(b, loc, g, static_cast<int64_t>(getAxis()));
  Value p = ExpOp::create(b, loc, getType(), getResult());
  return {SubOp::create(b, loc, g, MulOp::create(b, loc, p, s))};
}

// The weight operand of a norm's backward: the forward's, or ones [D].
static Value weightOrOnes(OpBuilder &b, Location loc, Value input,
                          Value weight) {
  if (weight)
    return weight;
  RankedTensorType t = tensorType(input);
  return splat(b, loc, t.clone({t.getShape().back()}), 1.0);
}

SmallVector<Value> LayerNormOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value w = weightOrOnes(b, loc, getInput(), getWeight());
  auto bw = LayerNormBackwardOp::create(
      b, loc, TypeRange{getType(), w.getType(), w.getType()}, getInput(), w,
      cotangents[0], getEpsAttr());
  // One cotangent per present operand, in operand order.
  SmallVector<Value> result = {bw.getDx()};
  if (getWeight())
    result.push_back(bw.getDweight());
  if (getBias())
    result.push_back(bw.getDbias());
  return result;
}

SmallVector<Value> RmsNormOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value w = weightOrOnes(b, loc, getInput(), getWeight());
  auto bw = RmsNormBackwardOp::create(b, loc, TypeRange{getType(), w.getType()},
                                      getInput(), w, cotangents[0],
                                      getEpsAttr());
  SmallVector<Value> result = {bw.getDx()};
  if (getWeight())
    result.push_back(bw.getDweight());
  return result;
}
