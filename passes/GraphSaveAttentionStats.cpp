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
  void runOnOperation() override { saveStats(getOperation()); }
};

} // namespace
