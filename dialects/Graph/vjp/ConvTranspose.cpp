//===- ConvTranspose.cpp - VJP of conv_transpose2d ------------------------===//
//
// conv_transpose2d is conv2d's input cotangent, so its own cotangents are
// conv2d's forward (input) and conv2d_backward_weight with the cotangent in
// the role of conv2d's input (weight), under the same attributes.
// output_padding needs nothing: conv2d's floor division drops those rows.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;

SmallVector<Value> ConvTranspose2dOp::buildVJP(OpBuilder &b,
                                               ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value dx = Conv2dOp::create(b, loc, getInput().getType(), g, getWeight(),
                              Value(), getStrideAttr(), getPaddingAttr(),
                              getDilationAttr(), getGroupsAttr());
  Value dw = Conv2dBackwardWeightOp::create(
      b, loc, getWeight().getType(), g, getInput(), getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  SmallVector<Value> result = {dx, dw};
  if (Value bias = getBias())
    result.push_back(ReduceSumOp::create(b, loc, bias.getType(), g,
                                         b.getDenseI64ArrayAttr({0, 2, 3}),
                                         b.getBoolAttr(false)));
  return result;
}
