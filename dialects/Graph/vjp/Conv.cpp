//===- Conv.cpp - VJPs of conv2d and the pools ----------------------------===//
//
// These need the backward ops of GraphGradOps.td: the input cotangent of a
// strided, dilated, grouped convolution is a transposed convolution, and
// pooling windows scatter.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

SmallVector<Value> Conv2dOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value dx = Conv2dBackwardInputOp::create(
      b, loc, getInput().getType(), g, getWeight(), getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  Value dw = Conv2dBackwardWeightOp::create(
      b, loc, getWeight().getType(), getInput(), g, getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  SmallVector<Value> result = {dx, dw};
  if (Value bias = getBias())
    result.push_back(ReduceSumOp::create(b, loc, bias.getType(), g,
                                         b.getDenseI64ArrayAttr({0, 2, 3}),
                                         b.getBoolAttr(false)));
  return result;
}

SmallVector<Value> MaxPool2dOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {MaxPool2dBackwardOp::create(
      b, getLoc(), getInput().getType(), getInput(), cotangents[0],
      getKernelSizeAttr(), getStrideAttr(), getPaddingAttr())};
}

SmallVector<Value> AvgPool2dOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {AvgPool2dBackwardOp::create(b, getLoc(), getInput().getType(),
                                      cotangents[0], getKernelSizeAttr(),
                                      getStrideAttr(), getPaddingAttr())};
}
