//===- Shape.cpp - VJPs of indexing, shape and reduction ops --------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// Integer ids get no cotangent; the table gets a scatter-add of g.
SmallVector<Value> EmbeddingOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {Value(), EmbeddingBackwardOp::create(b, getLoc(), getTable().getType(),
                                               getIds(), cotangents[0],
                                               /*init=*/Value())};
}

SmallVector<Value> ReshapeOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {reshape(b, getLoc(), cotangents[0],
                  tensorType(getInput()).getShape())};
}

// The inverse permutation: inv[perm[i]] = i.
SmallVector<Value> TransposeOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inv(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inv[p] = i;
  return {TransposeOp::create(b, getLoc(), getInput().getType(), cotangents[0],
                              b.getDenseI64ArrayAttr(inv))};
}

SmallVector<Value> SliceOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {SliceBackwardOp::create(b, getLoc(), getInput().getType(),
                                  cotangents[0], getStartsAttr(),
                                  getLimitsAttr(), getStridesAttr(),
                                  getPermAttr())};
}

// Each input's cotangent is its slab of g along the axis, transposed back
// by the inverse of the optional perm (a slice with that perm).
SmallVector<Value> ConcatOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Value g = cotangents[0];
  RankedTensorType gt = tensorType(g);
  // I64Attr getters return uint64_t: read the axis as signed.
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += gt.getRank();
  DenseI64ArrayAttr inverse;
  int64_t axisIn = axis; // the input dimension joined along the axis
  if (auto perm = getPerm()) {
    SmallVector<int64_t> inv(perm->size());
    for (auto [i, p] : llvm::enumerate(*perm))
      inv[p] = int64_t(i);
    inverse = b.getDenseI64ArrayAttr(inv);
    axisIn = (*perm)[axis];
  }
  SmallVector<Value> result;
  int64_t offset = 0;
  for (Value input : getInputs()) {
    RankedTensorType t = tensorType(input);
    int64_t size = t.getDimSize(axisIn);
    SmallVector<int64_t> starts(t.getRank(), 0), limits(gt.getShape());
    starts[axis] = offset;
    limits[axis] = offset + size;
    offset += size;
    if (!isa<FloatType>(t.getElementType())) {
      result.push_back(Value());
      continue;
    }
    result.push_back(SliceOp::create(b, getLoc(), t, g,
                                     b.getDenseI64ArrayAttr(starts),
                                     b.getDenseI64ArrayAttr(limits),
                                     DenseI64ArrayAttr(), inverse));
  }
  return result;
}

// g (the reduced shape) spread back over the reduced axes, times |factor|.
static Value spreadBack(OpBuilder &b, Location loc, Value g, Value input,
                        ArrayRef<int64_t> axes, bool keepdim, double factor) {
  RankedTensorType xt = tensorType(input);
  SmallVector<bool> reduced = reducedAxes(axes, xt.getRank());
  if (factor != 1.0)
    g = MulOp::create(b, loc, g,
                      scalar(b, loc, xt.getElementType(), factor));
  if (!keepdim) {
    SmallVector<int64_t> kept;
    for (int64_t i = 0; i < xt.getRank(); ++i)
      kept.push_back(reduced[i] ? 1 : xt.getDimSize(i));
    g = reshape(b, loc, g, kept);
  }
  return broadcastTo(b, loc, g, xt);
}

SmallVector<Value> ReduceSumOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {spreadBack(b, getLoc(), cotangents[0], getInput(), getAxes(),
                     getKeepdim(), 1.0)};
}

// mean = sum / N, N the number of elements reduced into each result.
SmallVector<Value> ReduceMeanOp::buildVJP(OpBuilder &b,
                                          ValueRange cotangents) {
  RankedTensorType xt = tensorType(getInput());
  SmallVector<bool> reduced = reducedAxes(getAxes(), xt.getRank());
  int64_t n = 1;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    if (reduced[i])
      n *= xt.getDimSize(i);
  return {spreadBack(b, getLoc(), cotangents[0], getInput(), getAxes(),
                     getKeepdim(), 1.0 / double(n))};
}

SmallVector<Value> ReduceMaxOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return {ReduceMaxBackwardOp::create(b, getLoc(), getInput().getType(),
                                      getInput(), cotangents[0], getAxesAttr(),
                                      getKeepdimAttr())};
}
