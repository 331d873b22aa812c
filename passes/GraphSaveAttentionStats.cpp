//===- GraphSaveAttentionStats.cpp - Attention's backward reads the forward's ===//
//
// A flash attention backward needs the forward's result o and the log-sum-
// exp of each query row (the softmax statistics). packed_attention_backward
// gets only qkv and g, so the CUDA library ran the forward again in it (one
// more cuDNN forward per layer per step, writing O and the statistics into
// scratch). Where a function holds both a packed_attention and its backward
// on the same qkv with the same heads, causal flag and scale (@<model>_grad
// after graph-autodiff), the forward becomes packed_attention_stats, which
// also returns the statistics (f32 [B, heads, T], B * heads * T * 4 bytes),
// and the backward packed_attention_stats_backward, which reads o and them.
// The values are unchanged: the CPU library and the interpreter compute the
// backward as before (bitwise), only the CUDA flash path reads o and stats.
// scaled_dot_product_attention and its backward (attention on separate q,
// k, v: llama's, after RoPE) get the same rewrite where neither has a mask
// and the forward no dropout: scaled_dot_product_attention_stats (stats f32
// [B, Hq, T]) and scaled_dot_product_attention_stats_backward.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphGradOps.h"
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHSAVEATTENTIONSTATS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// The same attention as |bw| (heads, causal, scale), in its block before it.
template <typename Fwd>
bool matches(Fwd f, PackedAttentionBackwardOp bw) {
  return f && f->getBlock() == bw->getBlock() && f->isBeforeInBlock(bw) &&
         f.getHeads() == bw.getHeads() && f.getCausal() == bw.getCausal() &&
         f.getScaleAttr() == bw.getScaleAttr();
}

// The stats op serving |bw|: one made earlier for another backward of the
// same forward, or the forward (a packed_attention on its qkv) rewritten.
PackedAttentionStatsOp statsFor(PackedAttentionBackwardOp bw) {
  for (Operation *user : bw.getQkv().getUsers())
    if (auto s = dyn_cast<PackedAttentionStatsOp>(user); matches(s, bw))
      return s;
  for (Operation *user : bw.getQkv().getUsers()) {
    auto f = dyn_cast<PackedAttentionOp>(user);
    if (!matches(f, bw))
      continue;
    OpBuilder b(f);
    auto qkv = cast<RankedTensorType>(f.getQkv().getType()).getShape();
    int64_t heads = int64_t(f.getHeads());
    auto statsType =
        RankedTensorType::get({qkv[0], heads, qkv[1]}, b.getF32Type());
    auto s = PackedAttentionStatsOp::create(
        b, f.getLoc(), TypeRange{f.getResult().getType(), statsType},
        ValueRange{f.getQkv()}, f->getAttrs());
    f.getResult().replaceAllUsesWith(s.getResult());
    f->erase();
    return s;
  }
  return {};
}

// |op|, on bw's q, attends with bw's k, v, causal flag and scale, in its
// block before it.
bool sameAttention(Operation *op, Value k, Value v, bool causal,
                   FloatAttr scale, ScaledDotProductAttentionBackwardOp bw) {
  return op->getBlock() == bw->getBlock() && op->isBeforeInBlock(bw) &&
         k == bw.getK() && v == bw.getV() && causal == bw.getCausal() &&
         scale == bw.getScaleAttr();
}

// The stats op serving |bw|: one made for another backward of the same
// forward, or the forward rewritten.
ScaledDotProductAttentionStatsOp sdpaStatsFor(
    ScaledDotProductAttentionBackwardOp bw) {
  for (Operation *user : bw.getQ().getUsers()) {
    auto s = dyn_cast<ScaledDotProductAttentionStatsOp>(user);
    if (s && s.getQ() == bw.getQ() &&
        sameAttention(s, s.getK(), s.getV(), s.getCausal(), s.getScaleAttr(),
                      bw))
      return s;
  }
  for (Operation *user : bw.getQ().getUsers()) {
    auto f = dyn_cast<ScaledDotProductAttentionOp>(user);
    if (!f || f.getQuery() != bw.getQ() || f.getMask() ||
        f.getDropoutP().convertToDouble() != 0.0 ||
        !sameAttention(f, f.getKey(), f.getValue(), f.getCausal(),
                       f.getScaleAttr(), bw))
      continue;
    OpBuilder b(f);
    auto q = cast<RankedTensorType>(f.getQuery().getType()).getShape();
    auto statsType =
        RankedTensorType::get({q[0], q[1], q[2]}, b.getF32Type());
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute a : f->getAttrs())
      if (a.getName() != f.getDropoutPAttrName())
        attrs.push_back(a);
    auto s = ScaledDotProductAttentionStatsOp::create(
        b, f.getLoc(), TypeRange{f.getResult().getType(), statsType},
        ValueRange{f.getQuery(), f.getKey(), f.getValue()}, attrs);
    f.getResult().replaceAllUsesWith(s.getResult());
    f->erase();
    return s;
  }
  return {};
}

void saveSdpaStats(Operation *root) {
  SmallVector<ScaledDotProductAttentionBackwardOp> bws;
  root->walk([&](ScaledDotProductAttentionBackwardOp op) {
    if (!op.getMask())
      bws.push_back(op);
  });
  for (ScaledDotProductAttentionBackwardOp bw : bws) {
    ScaledDotProductAttentionStatsOp stats = sdpaStatsFor(bw);
    if (!stats)
      continue;
    OpBuilder b(bw);
    auto nb = ScaledDotProductAttentionStatsBackwardOp::create(
        b, bw.getLoc(), bw->getResultTypes(),
        ValueRange{bw.getQ(), bw.getK(), bw.getV(), stats.getResult(),
                   stats.getStats(), bw.getG()},
        bw->getAttrs());
    bw->replaceAllUsesWith(nb->getResults());
    bw->erase();
  }
}

void saveStats(Operation *root) {
  SmallVector<PackedAttentionBackwardOp> bws;
  root->walk([&](PackedAttentionBackwardOp op) { bws.push_back(op); });
  for (PackedAttentionBackwardOp bw : bws) {
    PackedAttentionStatsOp stats = statsFor(bw);
    if (!stats)
      continue;
    OpBuilder b(bw);
    auto nb = PackedAttentionStatsBackwardOp::create(
        b, bw.getLoc(), TypeRange{bw.getDqkv().getType()},
        ValueRange{bw.getQkv(), stats.getResult(), stats.getStats(),
                   bw.getG()},
        bw->getAttrs());
    bw.getDqkv().replaceAllUsesWith(nb.getDqkv());
    bw->erase();
  }
}

struct GraphSaveAttentionStatsPass
    : ampc::impl::GraphSaveAttentionStatsBase<GraphSaveAttentionStatsPass> {
  void runOnOperation() override {
    saveStats(getOperation());
    saveSdpaStats(getOperation());
  }
};

} // namespace
