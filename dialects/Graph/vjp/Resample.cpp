//===- Resample.cpp - VJPs of adaptive_avg_pool2d and upsample_nearest2d --===//
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
