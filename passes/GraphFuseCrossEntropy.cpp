//===- GraphFuseCrossEntropy.cpp - The loss and its gradient in one pass --===//
//
// A training step computes cross_entropy(z, y) in the forward and
// cross_entropy_backward(z, y, g) at the start of the backward: two reads
// of the logits, which for a language model's vocabulary are the step's
// largest tensor (GPT-2 small: 8192 x 50257 bf16, 823 MB). g, the loss's
// cotangent, is the loss scale the step is seeded with: an argument of
// @<model>_grad, known before the forward runs. Where g is defined before
// the forward op, both become one graph.cross_entropy_with_grad at the
// forward's position, which reads each row once for the loss and the
// gradient; the memory plan may then write dlogits over the logits
// (kernel-plan-memory). Same values as the two ops.
//
// Left alone: probability labels (the backward is another op), a backward
// with other attributes or operands, and a g computed after the forward
// (a loss that is not the model's loss, or is scaled on the way).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphGradOps.h"
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSECROSSENTROPY
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// |v| is available at |op|: a block argument of op's block, or a value
// defined earlier in it.
bool availableAt(Value v, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == op->getBlock();
  Operation *def = v.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

// The forward cross_entropy |bw| is the cotangent of, if it can move there.
CrossEntropyOp forwardOf(CrossEntropyBackwardOp bw) {
  for (Operation *user : bw.getLogits().getUsers()) {
    auto f = dyn_cast<CrossEntropyOp>(user);
    if (f && f.getLabels() == bw.getLabels() &&
        f->getBlock() == bw->getBlock() && f->isBeforeInBlock(bw) &&
        f.getIgnoreIndex() == bw.getIgnoreIndex() &&
        f.getLabelSmoothing() == bw.getLabelSmoothing() &&
        availableAt(bw.getG(), f))
      return f;
  }
  return {};
}

void fuse(Operation *root) {
  SmallVector<CrossEntropyBackwardOp> bws;
  root->walk([&](CrossEntropyBackwardOp op) { bws.push_back(op); });
  for (CrossEntropyBackwardOp bw : bws) {
    CrossEntropyOp f = forwardOf(bw);
    if (!f)
      continue;
    OpBuilder b(f);
    auto fused = CrossEntropyWithGradOp::create(
        b, f.getLoc(),
        TypeRange{f.getResult().getType(), bw.getDlogits().getType()},
        ValueRange{f.getLogits(), f.getLabels(), bw.getG()}, f->getAttrs());
    f.getResult().replaceAllUsesWith(fused.getLoss());
    bw.getDlogits().replaceAllUsesWith(fused.getDlogits());
    bw->erase();
    f->erase();
  }
}

struct GraphFuseCrossEntropyPass
    : ampc::impl::GraphFuseCrossEntropyBase<GraphFuseCrossEntropyPass> {
  void runOnOperation() override { fuse(getOperation()); }
};

} // namespace
