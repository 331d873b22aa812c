//===- Attention.cpp - VJP of scaled_dot_product_attention ----------------===//
//
// The backward recomputes the attention weights (flash-attention style), so
// it is one op rather than a chain of forward ops holding [T, S] tensors.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

using namespace mlir;
using namespace ampc::graph;

SmallVector<Value>
ScaledDotProductAttentionOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  auto bw = ScaledDotProductAttentionBackwardOp::create(
      b, getLoc(),
      TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      getQuery(), getKey(), getValue(), cotangents[0], getMask(),
      getCausalAttr(), getScaleAttr());
  SmallVector<Value> cts{bw.getDq(), bw.getDk(), bw.getDv()};
  if (getMask())
    cts.push_back(Value()); // a keep-mask or an additive bias: no gradient
  return cts;
}
