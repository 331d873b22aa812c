//===- VJPBuilder.cpp - Helpers shared by the VJPs of graph ops -----------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;

namespace ampc::graph::vjp {

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Attribute elem = b.getFloatAttr(type.getElementType(), value);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, elem));
}

Value scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  return splat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = tensorType(v);
  if (t.getShape() == shape)
    return v;
  return ReshapeOp::create(b, loc, t.clone(shape), v);
}

Value sumToType(OpBuilder &b, Location loc, Value g, RankedTensorType type) {
  RankedTensorType gt = tensorType(g);
  if (gt.getShape() == type.getShape())
    return g;
  int64_t lead = gt.getRank() - type.getRank();
  SmallVector<int64_t> axes, kept, keptDims;
  for (int64_t i = 0; i < gt.getRank(); ++i) {
    bool broadcast = i < lead || (type.getDimSize(i - lead) == 1 &&
                                  gt.getDimSize(i) != 1);
    if (broadcast) {
      axes.push_back(i);
      keptDims.push_back(1);
    } else {
      kept.push_back(gt.getDimSize(i));
      keptDims.push_back(gt.getDimSize(i));
    }
  }
  // Same rank: keepdim gives the operand's shape directly.
  bool keepdim = lead == 0;
  Value sum = g;
  if (!axes.empty())
    sum = ReduceSumOp::create(b, loc, gt.clone(keepdim ? keptDims : kept), g,
                              b.getDenseI64ArrayAttr(axes),
                              b.getBoolAttr(keepdim));
  return reshape(b, loc, sum, type.getShape());
}

Value broadcastTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  if (tensorType(v).getShape() == type.getShape())
    return v;
  return BroadcastToOp::create(b, loc, type, v);
}

Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tensorType(v);
  int64_t r = t.getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
  std::swap(perm[r - 2], perm[r - 1]);
  SmallVector<int64_t> shape(t.getShape());
  std::swap(shape[r - 2], shape[r - 1]);
  return TransposeOp::create(b, loc, t.clone(shape), v,
                             b.getDenseI64ArrayAttr(perm));
}

SmallVector<bool> reducedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[a < 0 ? a + rank : a] = true;
  return reduced;
}

} // namespace ampc::graph::vjp
