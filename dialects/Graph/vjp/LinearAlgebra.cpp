//===- LinearAlgebra.cpp - VJPs of matmul, batch_matmul and linear --------===//
//
// C = A B: dA = g B^T, dB = A^T g. linear (y = x W^T + b) flattens its
// leading axes so its backward is two matmuls and a reduce_sum for the bias.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// dA and dB of C = op(A) op(B) with op(X) = X or X^T (last two axes) by
// the transpose flags. Without flags the VJP spells the transposes out
// (graph-fold-gemm-transpose turns them into flags); with flags it writes
// the flags directly:
//   A^T B:   dA = B g^T,      dB = A g
//   A B^T:   dA = g B,        dB = g^T A
//   A^T B^T: dA = B^T g^T,    dB = g^T A^T
template <typename GemmOp>
static SmallVector<Value> gemmVJP(OpBuilder &b, Location loc, Value a,
                                  Value bb, Value g, bool lt, bool rt) {
  if (!lt && !rt)
    return {GemmOp::create(b, loc, g, transposeLast2(b, loc, bb)),
            GemmOp::create(b, loc, transposeLast2(b, loc, a), g)};
  if (lt && !rt)
    return {GemmOp::create(b, loc, bb, g, false, true),
            GemmOp::create(b, loc, a, g)};
  if (!lt && rt)
    return {GemmOp::create(b, loc, g, bb),
            GemmOp::create(b, loc, g, a, true, false)};
  return {GemmOp::create(b, loc, bb, g, true, true),
          GemmOp::create(b, loc, g, a, true, true)};
}

SmallVector<Value> MatmulOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  return gemmVJP<MatmulOp>(b, getLoc(), getLhs(), getRhs(), cotangents[0],
                           getLhsTransposed(), getRhsTransposed());
}

SmallVector<Value> BatchMatmulOp::buildVJP(OpBuilder &b,
                                           ValueRange cotangents) {
  return gemmVJP<BatchMatmulOp>(b, getLoc(), getLhs(), getRhs(),
                                cotangents[0], getLhsTransposed(),
                                getRhsTransposed());
}

// x: [..., K], W: [N, K], g: [..., N]. With M the product of the leading
// axes: dx = g W, dW = g^T x (over [M, .] views), db = sum of g over the
// leading axes.
SmallVector<Value> LinearOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  RankedTensorType xt = tensorType(getInput()), wt = tensorType(getWeight());
  int64_t n = wt.getDimSize(0), k = wt.getDimSize(1);
  int64_t m = xt.getNumElements() / k;
  Value g2 = reshape(b, loc, g, {m, n});
  Value x2 = reshape(b, loc, getInput(), {m, k});
  Value dx = reshape(b, loc, MatmulOp::create(b, loc, g2, getWeight()),
                     xt.getShape());
  Value dw = MatmulOp::create(b, loc, transposeLast2(b, loc, g2), x2);
  SmallVector<Value> result = {dx, dw};
  if (getBias()) {
    auto gt = tensorType(g);
    Value db = g;
    if (gt.getRank() > 1)
      db = ReduceSumOp::create(
          b, loc, gt.clone({n}), g,
          b.getDenseI64ArrayAttr(
              llvm::to_vector(llvm::seq<int64_t>(0, gt.getRank() - 1))),
          b.getBoolAttr(false));
    result.push_back(db);
  }
  return result;
}
