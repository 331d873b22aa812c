//===- Elementwise.cpp - VJPs of elementwise ops --------------------------===//
//
// Binary ops broadcast, so each operand's cotangent is summed back to the
// operand's shape (sumToType). Unary VJPs reuse the forward result where
// that is cheaper (tanh, sigmoid, exp, sqrt).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

SmallVector<Value> AddOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Value g = cotangents[0];
  return {sumToType(b, getLoc(), g, tensorType(getLhs())),
          sumToType(b, getLoc(), g, tensorType(getRhs()))};
}

SmallVector<Value> SubOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Value g = cotangents[0];
  Value dr = sumToType(b, getLoc(), g, tensorType(getRhs()));
  return {sumToType(b, getLoc(), g, tensorType(getLhs())),
          NegOp::create(b, getLoc(), dr.getType(), dr)};
}

SmallVector<Value> MulOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Value g = cotangents[0];
  Location loc = getLoc();
  Value dl = MulOp::create(b, loc, g, getRhs());
  Value dr = MulOp::create(b, loc, g, getLhs());
  return {sumToType(b, loc, dl, tensorType(getLhs())),
          sumToType(b, loc, dr, tensorType(getRhs()))};
}

// z = l / r: dl = g / r, dr = -g * l / r^2 = -(g * z) / r.
SmallVector<Value> DivOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Value g = cotangents[0];
  Location loc = getLoc();
  Value dl = DivOp::create(b, loc, g, getRhs());
  Value gz = MulOp::create(b, loc, g, getResult());
  Value dr = sumToType(b, loc, DivOp::create(b, loc, gz, getRhs()),
                       tensorType(getRhs()));
  return {sumToType(b, loc, dl, tensorType(getLhs())),
          NegOp::create(b, loc, dr.getType(), dr)};
}

// maximum(l, r): l's share is maximum_backward(l, r, g), r's the same with
// the operands swapped (ties split g in halves); minimum swaps the roles.
static SmallVector<Value> minMaxVJP(OpBuilder &b, Location loc, Value lhs,
                                    Value rhs, Value result, Value g,
                                    bool isMax) {
  auto type = tensorType(result);
  Value l = broadcastTo(b, loc, lhs, type), r = broadcastTo(b, loc, rhs, type);
  Value dl = MaximumBackwardOp::create(b, loc, type, isMax ? l : r,
                                       isMax ? r : l, g);
  Value dr = MaximumBackwardOp::create(b, loc, type, isMax ? r : l,
                                       isMax ? l : r, g);
  return {sumToType(b, loc, dl, tensorType(lhs)),
          sumToType(b, loc, dr, tensorType(rhs))};
}

SmallVector<Value> MaximumOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return minMaxVJP(b, getLoc(), getLhs(), getRhs(), getResult(),
                   cotangents[0], /*isMax=*/true);
}

SmallVector<Value> MinimumOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return minMaxVJP(b, getLoc(), getLhs(), getRhs(), getResult(),
                   cotangents[0], /*isMax=*/false);
}

// dx = where(c, g, 0), dy = where(c, 0, g), each summed to its operand's
// shape; the integer condition has no cotangent.
SmallVector<Value> WhereOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value zero = scalar(b, loc, getType().getElementType(), 0.0);
  Value dx = WhereOp::create(b, loc, getCondition(), g, zero);
  Value dy = WhereOp::create(b, loc, getCondition(), zero, g);
  return {Value(), sumToType(b, loc, dx, tensorType(getX())),
          sumToType(b, loc, dy, tensorType(getY()))};
}

// dx = g with the filled elements zeroed: masked_fill(g, mask, 0).
SmallVector<Value> MaskedFillOp::buildVJP(OpBuilder &b,
                                          ValueRange cotangents) {
  return {MaskedFillOp::create(b, getLoc(), cotangents[0], getMask(),
                               b.getF64FloatAttr(0.0)),
          Value()};
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

SmallVector<Value> NegOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {NegOp::create(b, getLoc(), getType(), cotangents[0])};
}

SmallVector<Value> ReluOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {ReluBackwardOp::create(b, getLoc(), getType(), getInput(),
                                 cotangents[0])};
}

SmallVector<Value> GeluOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {GeluBackwardOp::create(b, getLoc(), getType(), getInput(),
                                 cotangents[0], getApproximateAttr())};
}

SmallVector<Value> SiluOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {SiluBackwardOp::create(b, getLoc(), getType(), getInput(),
                                 cotangents[0])};
}

SmallVector<Value> LeakyReluOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {LeakyReluBackwardOp::create(b, getLoc(), getType(), getInput(),
                                      cotangents[0], getNegativeSlopeAttr())};
}

SmallVector<Value> EluOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {EluBackwardOp::create(b, getLoc(), getType(), getInput(),
                                cotangents[0], getAlphaAttr(), getScaleAttr(),
                                getInputScaleAttr())};
}

SmallVector<Value> SoftplusOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {SoftplusBackwardOp::create(b, getLoc(), getType(), getInput(),
                                     cotangents[0], getBetaAttr(),
                                     getThresholdAttr())};
}

SmallVector<Value> ClampOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {ClampBackwardOp::create(b, getLoc(), getType(), getInput(),
                                  cotangents[0], getMinAttr(), getMaxAttr())};
}

// dx = g * sgn(x) = relu_backward(x, g) - relu_backward(-x, g): exact, and 0
// at x == 0 (PyTorch's abs backward).
SmallVector<Value> AbsOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value pos = ReluBackwardOp::create(b, loc, getType(), getInput(), g);
  Value negX = NegOp::create(b, loc, getType(), getInput());
  Value neg = ReluBackwardOp::create(b, loc, getType(), negX, g);
  return {SubOp::create(b, loc, pos, neg)};
}

// dx = 2/sqrt(pi) * exp(-x^2) * g, in the order of PyTorch's formula
// (derivatives.yaml).
SmallVector<Value> ErfOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Type et = getType().getElementType();
  Value x2 = MulOp::create(b, loc, getInput(), getInput());
  Value e = ExpOp::create(b, loc, getType(),
                          NegOp::create(b, loc, getType(), x2));
  Value c = MulOp::create(b, loc, scalar(b, loc, et, 1.12837916709551257390),
                          e);
  return {MulOp::create(b, loc, c, cotangents[0])};
}

// dx = g * cos(x).
SmallVector<Value> SinOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value c = CosOp::create(b, loc, getType(), getInput());
  return {MulOp::create(b, loc, cotangents[0], c)};
}

// dx = g * -sin(x).
SmallVector<Value> CosOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value s = SinOp::create(b, loc, getType(), getInput());
  return {MulOp::create(b, loc, cotangents[0],
                        NegOp::create(b, loc, getType(), s))};
}

// y = 1 / x: dx = -g * (y * y) (PyTorch's formula).
SmallVector<Value> ReciprocalOp::buildVJP(OpBuilder &b,
                                          ValueRange cotangents) {
  Location loc = getLoc();
  Value y = getResult();
  Value ng = NegOp::create(b, loc, getType(), cotangents[0]);
  return {MulOp::create(b, loc, ng, MulOp::create(b, loc, y, y))};
}

// y = tanh(x): dx = g * (1 - y^2).
SmallVector<Value> TanhOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value y = getResult();
  Value y2 = MulOp::create(b, loc, y, y);
  Value one = scalar(b, loc, getType().getElementType(), 1.0);
  Value d = SubOp::create(b, loc, one, y2);
  return {MulOp::create(b, loc, cotangents[0], d)};
}

// y = sigmoid(x): dx = g * y * (1 - y).
SmallVector<Value> SigmoidOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value y = getResult();
  Value one = scalar(b, loc, getType().getElementType(), 1.0);
  Value d = MulOp::create(b, loc, y, SubOp::create(b, loc, one, y));
  return {MulOp::create(b, loc, cotangents[0], d)};
}

// y = exp(x): dx = g * y.
SmallVector<Value> ExpOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {MulOp::create(b, getLoc(), cotangents[0], getResult())};
}

// dx = g / x.
SmallVector<Value> LogOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {DivOp::create(b, getLoc(), cotangents[0], getInput())};
}

// y = sqrt(x): dx = g * 0.5 / y.
SmallVector<Value> SqrtOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value half = scalar(b, loc, getType().getElementType(), 0.5);
  Value gh = MulOp::create(b, loc, cotangents[0], half);
  return {DivOp::create(b, loc, gh, getResult())};
}

// y = x^-1/2: dy/dx = -1/2 x^-3/2 = -0.5 * y / x.
SmallVector<Value> RsqrtOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value c = scalar(b, loc, getType().getElementType(), -0.5);
  Value gc = MulOp::create(b, loc, cotangents[0], c);
  Value yx = DivOp::create(b, loc, getResult(), getInput());
  return {MulOp::create(b, loc, gc, yx)};
}

// y = x^p: dx = g * p * x^(p-1); p = 0 has a zero cotangent.
SmallVector<Value> PowOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  double p = getExponent().convertToDouble();
  Value g = cotangents[0];
  if (p == 0.0)
    return {Value()};
  if (p == 1.0)
    return {g};
  Value base = getInput();
  if (p != 2.0)
    base = PowOp::create(b, loc, getType(), getInput(),
                         b.getF64FloatAttr(p - 1.0));
  Value scaled =
      MulOp::create(b, loc, base, scalar(b, loc, getType().getElementType(), p));
  return {MulOp::create(b, loc, g, scaled)};
}

// Counter-based mask: a dropout of g with the same p and key applies the
// forward's mask and its 1/(1-p) scale.
SmallVector<Value> DropoutOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {DropoutOp::create(b, getLoc(), getType(), cotangents[0], getPAttr(),
                            getKeyAttr())};
}

SmallVector<Value> CastOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {CastOp::create(b, getLoc(), getInput().getType(), cotangents[0])};
}

SmallVector<Value> BroadcastToOp::buildVJP(OpBuilder &b,
                                           ValueRange cotangents) {
  return {sumToType(b, getLoc(), cotangents[0], tensorType(getX()))};
}
