//===- GraphSugar.cpp - squeeze, unsqueeze, expand, broadcast matmul ------===//
//
// Verifiers of the shape sugar ops and the rewrite (ampc::graph::desugar)
// that turns them into the ops every pass, kernel and report knows:
// squeeze/unsqueeze -> reshape, expand -> broadcast_to, and a matmul or
// batch_matmul whose batch dimensions broadcast -> a flattened 2-D matmul
// ([..., M, K] x [K, N]) or broadcast_to of the operands + batch_matmul with
// equal batch dimensions, and attention with dropout_p > 0 -> PyTorch's math
// path around a graph.dropout. The rewritten ops keep the sugar op's location.
// Autodiff then gives the gradients of torch.matmul and expand for free:
// broadcast_to's VJP sums over the broadcast dimensions.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphGradOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

// Checks the element types agree and the spelled result shape is |want|.
LogicalResult checkResult(Operation *op, ArrayRef<int64_t> want) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  if (in.getElementType() != out.getElementType())
    return op->emitOpError() << "changes the element type "
                             << in.getElementType() << " -> "
                             << out.getElementType() << "; use graph.cast";
  if (out.getShape() != want)
    return op->emitOpError() << "result must be " << shapeStr(want)
                             << " for input " << shapeStr(in.getShape())
                             << ", got " << shapeStr(out.getShape());
  return success();
}

} // namespace

LogicalResult SqueezeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t rank = int64_t(in.size());
  SmallVector<bool> drop(in.size(), false);
  if (auto axes = getAxes()) {
    for (int64_t a : *axes) {
      int64_t n = a < 0 ? a + rank : a;
      if (n < 0 || n >= rank)
        return emitOpError() << "axis " << a
                             << " is out of range for a tensor of rank "
                             << rank;
      drop[n] = in[n] == 1; // torch.squeeze keeps a listed non-1 axis
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = in[i] == 1;
  }
  SmallVector<int64_t> want;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      want.push_back(in[i]);
  return checkResult(*this, want);
}

LogicalResult UnsqueezeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t rank = int64_t(in.size() + getAxes().size());
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : getAxes()) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank)
      return emitOpError() << "axis " << a
                           << " is out of range for a result of rank " << rank;
    if (inserted[n])
      return emitOpError() << "axis " << a << " is listed twice";
    inserted[n] = true;
  }
  SmallVector<int64_t> want;
  for (int64_t i = 0, k = 0; i < rank; ++i)
    want.push_back(inserted[i] ? 1 : in[k++]);
  return checkResult(*this, want);
}

LogicalResult ExpandOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> out = shapeOf(getResult());
  bool ok = in.size() <= out.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    int64_t a = in[in.size() - 1 - i], b = out[out.size() - 1 - i];
    ok = a == b || a == 1;
  }
  if (!ok)
    return emitOpError() << "cannot expand " << shapeStr(in) << " to "
                         << shapeStr(out)
                         << " (a dimension must match or be 1)";
  return checkResult(*this, out);
}

namespace {

Value broadcastTo(OpBuilder &b, Location loc, Value v,
                  ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  return BroadcastToOp::create(b, loc, t.clone(shape), v);
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  return ReshapeOp::create(b, loc, t.clone(shape), v);
}

Value transposeLast2(OpBuilder &b, Location loc, Value v);

// A matmul/batch_matmul in the form the kernels take, or null when |op|
// already is: 2-D matmul, or batch_matmul with equal batch dimensions.
// Transpose flags stay on those forms; the broadcasting forms materialise
// the transposes first.
Value lowerMatmul(OpBuilder &b, Operation *op) {
  Value l = op->getOperand(0), r = op->getOperand(1);
  ArrayRef<int64_t> ls = shapeOf(l), rs = shapeOf(r);
  bool isMatmul = isa<MatmulOp>(op);
  bool lt = op->hasAttr("lhs_transposed"), rt = op->hasAttr("rhs_transposed");
  if (ls.size() == 2 && rs.size() == 2)
    return isMatmul ? Value()
                    : Value(MatmulOp::create(b, op->getLoc(), l, r, lt, rt));
  if (!isMatmul && ls.size() == rs.size() && ls.drop_back(2) == rs.drop_back(2))
    return Value();
  Location loc = op->getLoc();
  if (lt)
    l = transposeLast2(b, loc, l), ls = shapeOf(l);
  if (rt)
    r = transposeLast2(b, loc, r), rs = shapeOf(r);
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  int64_t m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
  if (rs.size() == 2) {
    // [..., M, K] x [K, N]: one GEMM over the flattened rows.
    int64_t rows = 1;
    for (int64_t d : ls.drop_back(1))
      rows *= d;
    Value flat = reshape(b, loc, l, {rows, k});
    Value y = MatmulOp::create(b, loc, flat, r);
    return reshape(b, loc, y, out);
  }
  SmallVector<int64_t> batch(out.drop_back(2));
  SmallVector<int64_t> lFull(batch), rFull(batch);
  lFull.append({m, k});
  rFull.append({k, n});
  return BatchMatmulOp::create(b, loc, broadcastTo(b, loc, l, lFull),
                               broadcastTo(b, loc, r, rFull));
}

Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  int64_t r = t.getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
  std::swap(perm[r - 2], perm[r - 1]);
  SmallVector<int64_t> shape(t.getShape());
  std::swap(shape[r - 2], shape[r - 1]);
  return TransposeOp::create(b, loc, t.clone(shape), v,
                             b.getDenseI64ArrayAttr(perm));
}

Value constant(OpBuilder &b, Location loc, RankedTensorType type,
               ArrayRef<double> values) {
  auto et = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> elems;
  for (double d : values) {
    APFloat f(d);
    bool lost;
    f.convert(et.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    elems.push_back(f);
  }
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, elems));
}

// Attention with dropout_p > 0 as PyTorch's math path (enable_gqa: the query
// heads a kv head serves are consecutive, so a reshape groups them):
//   s = (q k^T) * scale [+ causal -inf] [+ mask | where(mask, s, -inf)],
//   o = dropout(softmax(s), p) v.
Value lowerAttentionDropout(OpBuilder &b, ScaledDotProductAttentionOp op) {
  Location loc = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  auto qt = cast<RankedTensorType>(q.getType());
  Type et = qt.getElementType();
  int64_t B = qs[0], hq = qs[1], t = qs[2], d = qs[3], hkv = ks[1], s = ks[2],
          e = vs[3], group = hq / hkv;
  Value qg = reshape(b, loc, q, {B, hkv, group * t, d});
  Value scores = BatchMatmulOp::create(b, loc, qg, transposeLast2(b, loc, k));
  scores = reshape(b, loc, scores, {B, hq, t, s});
  auto st = RankedTensorType::get({B, hq, t, s}, et);
  scores = MulOp::create(b, loc, st, scores,
                         constant(b, loc, RankedTensorType::get({}, et),
                                  {op.getScaleOrDefault()}));
  if (op.getCausal()) {
    SmallVector<double> tri;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        tri.push_back(j > i ? -INFINITY : 0.0);
    scores = AddOp::create(b, loc, st, scores,
                           constant(b, loc, RankedTensorType::get({t, s}, et),
                                    tri));
  }
  if (Value mask = op.getMask()) {
    if (isa<FloatType>(elementTypeOf(mask)))
      scores = AddOp::create(b, loc, st, scores, mask);
    else
      scores = WhereOp::create(
          b, loc, st, mask, scores,
          constant(b, loc, RankedTensorType::get({}, et), {-INFINITY}));
  }
  Value p = SoftmaxOp::create(b, loc, st, scores, b.getI64IntegerAttr(-1));
  p = DropoutOp::create(b, loc, st, p, op.getDropoutPAttr(), IntegerAttr());
  Value o = BatchMatmulOp::create(
      b, loc, reshape(b, loc, p, {B, hkv, group * t, s}), v);
  return reshape(b, loc, o, {B, hq, t, e});
}

} // namespace

void ampc::graph::desugar(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<SqueezeOp, UnsqueezeOp, ExpandOp, MatmulOp, BatchMatmulOp>(op))
      ops.push_back(op);
    if (auto a = dyn_cast<ScaledDotProductAttentionOp>(op))
      if (a.getDropoutP().convertToDouble() > 0.0)
        ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Value repl;
    Type type = op->getResult(0).getType();
    if (isa<SqueezeOp, UnsqueezeOp>(op))
      repl = ReshapeOp::create(b, op->getLoc(), type, op->getOperand(0));
    else if (isa<ExpandOp>(op))
      repl = broadcastTo(b, op->getLoc(), op->getOperand(0),
                         shapeOf(op->getResult(0)));
    else if (auto a = dyn_cast<ScaledDotProductAttentionOp>(op))
      repl = lowerAttentionDropout(b, a);
    else
      repl = lowerMatmul(b, op);
    if (!repl)
      continue;
    // Attributes such as a precision pin carry over to the rewritten op.
    Operation *def = repl.getDefiningOp();
    if (def && repl != op->getOperand(0))
      for (NamedAttribute a : op->getDiscardableAttrs())
        def->setAttr(a.getName(), a.getValue());
    op->getResult(0).replaceAllUsesWith(repl);
    op->erase();
  }
}
