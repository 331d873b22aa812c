//===- BatchNorm.cpp - VJPs of batch_norm and group_norm ------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;

// The training step differentiates the batch-statistics form; the running
// statistics are state and get no cotangent.
SmallVector<Value> BatchNormOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Type wt = getWeight().getType();
  auto bw = BatchNormBackwardOp::create(b, loc, TypeRange{getType(), wt, wt},
                                        getInput(), getWeight(), cotangents[0],
                                        getEpsAttr());
  return {bw.getDx(), Value(), Value(), bw.getDweight(), bw.getDbias()};
}

SmallVector<Value> GroupNormOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Type wt = getWeight().getType();
  auto bw = GroupNormBackwardOp::create(
      b, getLoc(), TypeRange{getType(), wt, wt}, getInput(), getWeight(),
      cotangents[0], getNumGroupsAttr(), getEpsAttr());
  return {bw.getDx(), bw.getDweight(), bw.getDbias()};
}
