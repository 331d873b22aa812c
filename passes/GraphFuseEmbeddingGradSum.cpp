//===- GraphFuseEmbeddingGradSum.cpp - A table gradient summed in place ---===//
//
// A tied embedding (GPT-2's token table, also the LM head's weight) gets
// two gradients that autodiff adds: the embedding's scatter-add and the
// GEMM's dW, cast to f32 under AMP. The scatter-add zero-fills the [V, D]
// table gradient and the add reads it back. graph.embedding_backward with
// `init` starts from the other gradient instead: each row its FP32 sum
// plus the other's row, which is the add's arithmetic on the same
// operands, so the result is bitwise the same.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSEEMBEDDINGGRADSUM
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// add(E, Y) or add(Y, E), E a plain f32 embedding_backward used only here,
// Y of E's type: embedding_backward(ids, g, init = Y, or X if Y = cast(X)).
void fuse(AddOp add) {
  Type t = add.getResult().getType();
  if (add.getLhs().getType() != t || add.getRhs().getType() != t ||
      !cast<RankedTensorType>(t).getElementType().isF32())
    return;
  for (int side = 0; side < 2; ++side) {
    Value e = side ? add.getRhs() : add.getLhs();
    Value y = side ? add.getLhs() : add.getRhs();
    auto eb = e.getDefiningOp<EmbeddingBackwardOp>();
    if (!eb || eb.getInit() || !e.hasOneUse() ||
        eb->getBlock() != add->getBlock())
      continue;
    // Widening is exact: read the half value itself.
    auto c = y.getDefiningOp<CastOp>();
    Value init = c ? c.getInput() : y;
    OpBuilder b(add);
    auto fused = EmbeddingBackwardOp::create(b, eb.getLoc(), t, eb.getIds(),
                                             eb.getG(), init);
    add.getResult().replaceAllUsesWith(fused.getResult());
    add->erase();
    eb->erase();
    if (c && c.getResult().use_empty())
      c->erase();
    return;
  }
}

struct GraphFuseEmbeddingGradSumPass
    : ampc::impl::GraphFuseEmbeddingGradSumBase<
          GraphFuseEmbeddingGradSumPass> {
  void runOnOperation() override {
    SmallVector<AddOp> adds;
    getOperation()->walk([&](AddOp a) { adds.push_back(a); });
    for (AddOp a : adds)
      fuse(a);
  }
};

} // namespace
