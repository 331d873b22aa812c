//===- GraphFoldGemmTranspose.cpp - Transposed GEMM operands as flags -----===//
//
// A graph.transpose of the last two axes feeding a matmul/batch_matmul is a
// strided copy the GEMM does not need: cuBLASLt and cblas read the operand
// in place with their transpose flag. Autodiff writes such transposes for
// every GEMM's backward (dW = g^T x).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

#include "llvm/ADT/SetVector.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFOLDGEMMTRANSPOSE
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// True when |t| swaps exactly the last two axes and keeps the others.
bool swapsLast2(TransposeOp t) {
  ArrayRef<int64_t> perm = t.getPerm();
  int64_t r = perm.size();
  if (r < 2)
    return false;
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
}

// Folds the transposes of |op|'s operands into its flags; returns the
// transposes it bypassed (to erase once unused).
template <typename GemmOp>
void fold(GemmOp op, SetVector<Operation *> &bypassed) {
  for (unsigned i = 0; i < 2; ++i) {
    auto t = op->getOperand(i).template getDefiningOp<TransposeOp>();
    if (!t || !swapsLast2(t))
      continue;
    op->setOperand(i, t.getInput());
    StringRef flag = i == 0 ? "lhs_transposed" : "rhs_transposed";
    // A transpose of an operand already read transposed cancels the flag.
    if (op->hasAttr(flag))
      op->removeAttr(flag);
    else
      op->setAttr(flag, UnitAttr::get(op->getContext()));
    bypassed.insert(t);
  }
}

struct GraphFoldGemmTransposePass
    : ampc::impl::GraphFoldGemmTransposeBase<GraphFoldGemmTransposePass> {
  void runOnOperation() override {
    SetVector<Operation *> bypassed; // once each, however many GEMMs read it
    getOperation()->walk([&](Operation *op) {
      if (auto m = dyn_cast<MatmulOp>(op))
        fold(m, bypassed);
      else if (auto m = dyn_cast<BatchMatmulOp>(op))
        fold(m, bypassed);
    });
    // A transpose with other users stays (they still need the copy).
    for (Operation *t : bypassed)
      if (t->use_empty())
        t->erase();
  }
};

} // namespace
