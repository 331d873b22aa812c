//===- Resample.cpp - VJPs of adaptive pooling and upsampling -------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;

SmallVector<Value> AdaptiveAvgPool2dOp::buildVJP(OpBuilder &b,
                                                 ValueRange cotangents) {
  return {AdaptiveAvgPool2dBackwardOp::create(b, getLoc(), getInput().getType(),
                                              cotangents[0])};
}

SmallVector<Value> UpsampleNearest2dOp::buildVJP(OpBuilder &b,
                                                 ValueRange cotangents) {
  return {UpsampleNearest2dBackwardOp::create(
      b, getLoc(), getInput().getType(), cotangents[0], getSizeAttr(),
      getScalesHAttr(), getScalesWAttr())};
}

SmallVector<Value> UpsampleBilinear2dOp::buildVJP(OpBuilder &b,
                                                  ValueRange cotangents) {
  return {UpsampleBilinear2dBackwardOp::create(
      b, getLoc(), getInput().getType(), cotangents[0], getSizeAttr(),
      getScalesHAttr(), getScalesWAttr(), getAlignCornersAttr())};
}
