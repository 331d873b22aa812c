//===- GraphFuseBiasGrad.cpp - dW and db of a linear in one GEMM ----------===//
//
// The backward of every linear with a bias computes dW = dY^T X as a matmul
// (dY read transposed) and db as a reduce_sum of the same dY over all but
// its last axis, which reads dY a second time. cuBLASLt sums the GEMM's
// operand over K inside the GEMM (the BGRADB epilogue), so the two become
// one graph.matmul_bias_grad.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSEBIASGRAD
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// True when |v| can be used at |at|: defined in an enclosing block or before
// |at| in its block.
bool availableAt(Value v, Operation *at) {
  Block *b = v.getParentBlock();
  if (Operation *def = v.getDefiningOp())
    return def->getBlock() != at->getBlock() || def->isBeforeInBlock(at);
  return b == at->getBlock() || b->getParentOp()->isProperAncestor(at);
}

// True when |r| sums its operand over every axis but the last, to the
// operand's element type: a bias gradient's shape.
bool sumsLeadingAxes(ReduceSumOp r) {
  auto x = cast<RankedTensorType>(r.getInput().getType());
  auto y = cast<RankedTensorType>(r.getResult().getType());
  int64_t rank = x.getRank();
  if (rank < 2 || r.getKeepdim() || y.getElementType() != x.getElementType())
    return false;
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : r.getAxes()) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank)
      return false;
    reduced[n] = true;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d] != (d < rank - 1))
      return false;
  return true;
}

// True when |v| is |x| seen as the 2-D [rows, last] matrix the GEMM reads:
// |x| itself or a reshape of it that keeps its last axis.
bool isRowsView(Value v, Value x) {
  if (v != x) {
    auto reshape = v.getDefiningOp<ReshapeOp>();
    if (!reshape || reshape.getInput() != x)
      return false;
  }
  auto t = cast<RankedTensorType>(v.getType());
  auto xt = cast<RankedTensorType>(x.getType());
  return t.getRank() == 2 && t.getDimSize(1) == xt.getShape().back();
}

// The matmul reading |x| as its transposed lhs whose reduction dimension is
// the one |r| sums over, or null.
MatmulOp findGemm(ReduceSumOp r) {
  Value x = r.getInput();
  auto consider = [&](Value v) -> MatmulOp {
    for (Operation *user : v.getUsers()) {
      auto m = dyn_cast<MatmulOp>(user);
      if (!m || m.getLhs() != v || !m.getLhsTransposed() ||
          !isRowsView(v, x) ||
          cast<RankedTensorType>(m.getRhs().getType()).getRank() != 2 ||
          m->getBlock() != r->getBlock())
        continue;
      return m;
    }
    return nullptr;
  };
  if (MatmulOp m = consider(x))
    return m;
  for (Operation *user : x.getUsers())
    if (auto reshape = dyn_cast<ReshapeOp>(user))
      if (MatmulOp m = consider(reshape.getResult()))
        return m;
  return nullptr;
}

struct GraphFuseBiasGradPass
    : ampc::impl::GraphFuseBiasGradBase<GraphFuseBiasGradPass> {
  void runOnOperation() override {
    SmallVector<ReduceSumOp> sums;
    getOperation()->walk([&](ReduceSumOp r) { sums.push_back(r); });
    for (ReduceSumOp r : sums) {
      if (!sumsLeadingAxes(r))
        continue;
      MatmulOp m = findGemm(r);
      if (!m)
        continue;
      // Built where the earlier of the two stood, if the operands are there.
      Operation *at = m->isBeforeInBlock(r) ? m.getOperation() : r;
      if (!availableAt(m.getLhs(), at) || !availableAt(m.getRhs(), at))
        continue;
      OpBuilder b(at);
      auto fused = MatmulBiasGradOp::create(
          b, m.getLoc(),
          m.getResult().getType(), r.getResult().getType(), m.getLhs(),
          m.getRhs(), m.getLhsTransposed(), m.getRhsTransposed());
      // Keep the AMP notes (precision and rule) of the GEMM.
      for (NamedAttribute a : m->getDiscardableAttrs())
        fused->setAttr(a.getName(), a.getValue());
      m.getResult().replaceAllUsesWith(fused.getResult());
      r.getResult().replaceAllUsesWith(fused.getBiasGrad());
      m->erase();
      r->erase();
    }
  }
};

} // namespace
