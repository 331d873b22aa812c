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

SmallVector<Value> MatmulOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value da = MatmulOp::create(b, loc, g, transposeLast2(b, loc, getRhs()));
  Value db = MatmulOp::create(b, loc, transposeLast2(b, loc, getLhs()), g);
  return {da, db};
}

SmallVector<Value> BatchMatmulOp::buildVJP(OpBuilder &b,
                                           ValueRange cotangents) {
  Location loc = getLoc();
  Value g = cotangents[0];
  Value da = BatchMatmulOp::create(b, loc, g, transposeLast2(b, loc, getRhs()));
  Value db = BatchMatmulOp::create(b, loc, transposeLast2(b, loc, getLhs()), g);
  return {da, db};
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
