//===- Attention.cpp - VJP of scaled_dot_product_attention ----------------===//
//
// The backward recomputes the attention weights (flash-attention style), so
// it is one op rather than a chain of forward ops holding [T, S] tensors.
//
// A float (additive) mask that depends on a parameter (a learned bias:
// ALiBi slopes, relative positions) gets its gradient too: it is added to
// the scores, so dmask = dscores = P * (dP - rowsum(dP * P)) with
// P = softmax(scores) and dP = dO v^T, summed over the axes the mask was
// broadcast along. Those [B, Hq, T, S] tensors are built from graph ops
// only in that case; a constant or input mask costs nothing.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/vjp/VJPBuilder.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::vjp;

// Whether |v| is computed from a parameter: a graph.param, or an entry
// argument of @<model>_grad that stands for one.
static bool dependsOnParam(Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      auto fn = dyn_cast_or_null<FunctionOpInterface>(
          arg.getOwner()->getParentOp());
      if (fn && arg.getOwner()->isEntryBlock() &&
          fn.getArgAttr(arg.getArgNumber(), kParamAttr))
        return true;
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (isa<ParamOp>(def))
      return true;
    work.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

// dscores of the attention |op| for the result cotangent |g|, [B, Hq, T, S].
static Value attentionScoresGrad(OpBuilder &b, ScaledDotProductAttentionOp op,
                                 Value g) {
  Location loc = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  ArrayRef<int64_t> qs = tensorType(q).getShape();
  ArrayRef<int64_t> ks = tensorType(k).getShape();
  ArrayRef<int64_t> vs = tensorType(v).getShape();
  Type et = tensorType(q).getElementType();
  int64_t B = qs[0], hq = qs[1], t = qs[2], d = qs[3], hkv = ks[1], s = ks[2],
          e = vs[3], group = hq / hkv;
  auto st = RankedTensorType::get({B, hq, t, s}, et);
  // Grouped-query attention: the query heads a kv head serves are
  // consecutive, so a reshape groups them (as graph-desugar's math path).
  Value qg = reshape(b, loc, q, {B, hkv, group * t, d});
  Value scores = BatchMatmulOp::create(b, loc, qg, transposeLast2(b, loc, k));
  scores = reshape(b, loc, scores, {B, hq, t, s});
  scores = MulOp::create(b, loc, st, scores,
                         scalar(b, loc, et, op.getScaleOrDefault()));
  if (op.getCausal()) {
    SmallVector<APFloat> tri;
    const auto &sem = cast<FloatType>(et).getFloatSemantics();
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        tri.push_back(j > i ? APFloat::getInf(sem, /*Negative=*/true)
                            : APFloat::getZero(sem));
    auto tt = RankedTensorType::get({t, s}, et);
    scores = AddOp::create(b, loc, st, scores,
                           ConstantOp::create(
                               b, loc, DenseElementsAttr::get(tt, tri)));
  }
  scores = AddOp::create(b, loc, st, scores, op.getMask());
  Value p = SoftmaxOp::create(b, loc, st, scores, b.getI64IntegerAttr(-1));
  Value gg = reshape(b, loc, g, {B, hkv, group * t, e});
  Value dp = BatchMatmulOp::create(b, loc, gg, transposeLast2(b, loc, v));
  dp = reshape(b, loc, dp, {B, hq, t, s});
  Value rowsum = ReduceSumOp::create(
      b, loc, st.clone(ArrayRef<int64_t>{B, hq, t, 1}),
      MulOp::create(b, loc, st, dp, p), b.getDenseI64ArrayAttr({3}),
      b.getBoolAttr(true));
  return MulOp::create(b, loc, st, p, SubOp::create(b, loc, st, dp, rowsum));
}

SmallVector<Value>
ScaledDotProductAttentionOp::buildVJP(OpBuilder &b, ValueRange cotangents) {
  auto bw = ScaledDotProductAttentionBackwardOp::create(
      b, getLoc(),
      TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      getQuery(), getKey(), getValue(), cotangents[0], getMask(),
      getCausalAttr(), getScaleAttr());
  SmallVector<Value> cts{bw.getDq(), bw.getDk(), bw.getDv()};
  if (Value mask = getMask()) {
    // A keep-mask (integer) has no gradient; nor has a mask that no
    // parameter reaches (the autodiff would drop it).
    if (isa<FloatType>(tensorType(mask).getElementType()) &&
        dependsOnParam(mask))
      cts.push_back(sumToType(b, getLoc(),
                              attentionScoresGrad(b, *this, cotangents[0]),
                              tensorType(mask)));
    else
      cts.push_back(Value());
  }
  return cts;
}

// The packed form's gradient is packed too: dq, dk and dv land in the thirds
// of one d(qkv), so no concat (or zero-filled slice_backward sums) follows.
SmallVector<Value> PackedAttentionOp::buildVJP(OpBuilder &b,
                                               ValueRange cotangents) {
  auto bw = PackedAttentionBackwardOp::create(
      b, getLoc(), getQkv().getType(), getQkv(), cotangents[0],
      getHeadsAttr(), getCausalAttr(), getScaleAttr());
  return {bw.getDqkv()};
}
