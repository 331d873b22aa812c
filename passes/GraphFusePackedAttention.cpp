//===- GraphFusePackedAttention.cpp - Attention on the packed qkv ---------===//
//
// GPT-style attention slices q, k and v out of one [B, T, 3E] projection,
// reshapes each to [B, T, H, D], transposes it to [B, H, T, D], and after
// the attention transposes and reshapes the result back to [B, T, E]. Each
// of those is a copy on the targets (three strided slices and a transpose
// forward; a transpose of dO and a concat of dq, dk, dv backward). The
// attention kernels can read q, k, v as strided views of qkv and write o as
// [B, T, H, D] directly, so the chain becomes one graph.packed_attention,
// whose VJP writes one packed d(qkv).
//
// It runs before graph-autodiff (after graph-autocast, whose precision notes
// it keeps), so the backward is built from the packed op. Only where the
// packed kernels read qkv in place (runtime/kernels/AttentionPath.h: half
// types, head dims cuDNN takes): elsewhere they copy q, k, v out of qkv
// again in the backward, which costs more than the unfused graph's copies
// after graph-collapse-data-movement (gpt_tiny in FP32: 115.0 -> 118.2 MB a
// step), so that attention is left alone.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"
#include "runtime/kernels/AttentionPath.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSEPACKEDATTENTION
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

// True when the CUDA library's packed kernels take the strided flash path
// for this element type and head dim.
bool readsInPlace(Type et, int64_t d) {
  ampc::rt::DType t;
  if (et.isF16())
    t = ampc::rt::DType::F16;
  else if (et.isBF16())
    t = ampc::rt::DType::BF16;
  else
    return false;
  return ampc::kernels::flashAttentionEligible(t, {t}, d, d, false);
}

bool isHeadSwap(ArrayRef<int64_t> perm) {
  return perm == ArrayRef<int64_t>{0, 2, 1, 3};
}

// The qkv a q, k or v operand |x| [B, H, T, D] is the third |part| of:
// x = transpose(reshape(slice(qkv, last axis [part*E, (part+1)*E))), with
// every op between used once. Null otherwise.
Value packedSource(Value x, int64_t part) {
  auto tr = x.getDefiningOp<TransposeOp>();
  if (!tr || !isHeadSwap(tr.getPerm()) || !tr->hasOneUse())
    return nullptr;
  auto rs = tr.getInput().getDefiningOp<ReshapeOp>();
  if (!rs || !rs->hasOneUse())
    return nullptr;
  auto sl = rs.getInput().getDefiningOp<SliceOp>();
  if (!sl || !sl->hasOneUse() || sl.getPerm())
    return nullptr;
  if (auto st = sl.getStrides())
    if (llvm::any_of(*st, [](int64_t s) { return s != 1; }))
      return nullptr;
  Value qkv = sl.getInput();
  ArrayRef<int64_t> ps = shapeOf(qkv), hs = shapeOf(rs.getResult());
  if (ps.size() != 3 || hs.size() != 4 || ps[2] % 3 != 0)
    return nullptr;
  int64_t e = ps[2] / 3;
  SmallVector<int64_t> starts{0, 0, part * e}, limits{ps[0], ps[1],
                                                       (part + 1) * e};
  if (sl.getStarts() != ArrayRef<int64_t>(starts) ||
      sl.getLimits() != ArrayRef<int64_t>(limits))
    return nullptr;
  // [B, T, E] -> [B, T, H, D]: the heads split the last axis.
  if (hs[0] != ps[0] || hs[1] != ps[1] || hs[2] * hs[3] != e)
    return nullptr;
  return qkv;
}

// The reshape of |op|'s result back to [B, T, E] through the head swap,
// each used once; null otherwise.
ReshapeOp packedResult(ScaledDotProductAttentionOp op) {
  if (!op->hasOneUse())
    return nullptr;
  auto tr = dyn_cast<TransposeOp>(*op->getUsers().begin());
  if (!tr || !isHeadSwap(tr.getPerm()) || !tr->hasOneUse())
    return nullptr;
  auto rs = dyn_cast<ReshapeOp>(*tr->getUsers().begin());
  if (!rs)
    return nullptr;
  ArrayRef<int64_t> os = shapeOf(op.getResult()), rs3 = shapeOf(rs.getResult());
  if (rs3.size() != 3 || rs3[0] != os[0] || rs3[1] != os[2] ||
      rs3[2] != os[1] * os[3])
    return nullptr;
  return rs;
}

// Rewrites |op| if it is the packed pattern; true if it did.
bool fuse(ScaledDotProductAttentionOp op) {
  if (op.getMask() || op.getDropoutP().convertToDouble() != 0.0)
    return false;
  Value qkv = packedSource(op.getQuery(), 0);
  if (!qkv || packedSource(op.getKey(), 1) != qkv ||
      packedSource(op.getValue(), 2) != qkv)
    return false;
  // Same shapes for q, k and v (no grouped-query heads; D = E).
  ArrayRef<int64_t> qs = shapeOf(op.getQuery());
  if (shapeOf(op.getKey()) != qs || shapeOf(op.getValue()) != qs)
    return false;
  if (!readsInPlace(elementTypeOf(qkv), qs[3]))
    return false;
  ReshapeOp out = packedResult(op);
  if (!out)
    return false;
  OpBuilder b(op);
  auto fused = PackedAttentionOp::create(
      b, op.getLoc(), out.getResult().getType(), qkv,
      b.getI64IntegerAttr(qs[1]), op.getCausalAttr(), op.getScaleAttr());
  // Keep the AMP notes (precision, rule) and a user's pin.
  for (NamedAttribute a : op->getDiscardableAttrs())
    fused->setAttr(a.getName(), a.getValue());
  out.getResult().replaceAllUsesWith(fused.getResult());
  // The chain is dead now: the result side, then each operand's.
  Operation *tr = *op->getUsers().begin();
  out->erase();
  tr->erase();
  SmallVector<Value> operands{op.getQuery(), op.getKey(), op.getValue()};
  op->erase();
  for (Value x : operands) {
    Operation *t = x.getDefiningOp();
    Operation *r = t->getOperand(0).getDefiningOp();
    Operation *s = r->getOperand(0).getDefiningOp();
    t->erase();
    r->erase();
    s->erase();
  }
  return true;
}

struct GraphFusePackedAttentionPass
    : ampc::impl::GraphFusePackedAttentionBase<GraphFusePackedAttentionPass> {
  void runOnOperation() override {
    SmallVector<ScaledDotProductAttentionOp> ops;
    getOperation()->walk(
        [&](ScaledDotProductAttentionOp op) { ops.push_back(op); });
    for (ScaledDotProductAttentionOp op : ops)
      fuse(op);
  }
};

} // namespace
