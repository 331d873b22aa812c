//===- KernelHoistGrads.cpp - Each gradient finished as early as it can be -===//
//
// Autodiff leaves the ops that finish the FP32 gradients (under AMP, the
// cast of each half weight gradient) at the end of @<model>_grad, after the
// whole backward. Their half inputs stay live until then, which the memory
// plan pays for, and a data-parallel step cannot start a gradient's
// all-reduce before the backward ends. An op whose every result is an FP32
// gradient returned once (written in place into the runtime's buffer:
// passes/GradInPlace.h) is moved to just after the last of its operands.
// The ops are pure, so every value is bitwise the same.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/GradFunctions.h"
#include "passes/Passes.h"
#include "passes/ValueAliases.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace ampc {
#define GEN_PASS_DEF_KERNELHOISTGRADS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

struct KernelHoistGradsPass
    : ampc::impl::KernelHoistGradsBase<KernelHoistGradsPass> {
  void runOnOperation() override {
    for (func::FuncOp grad : definedGradFunctions(getOperation()))
      hoist(grad);
  }

  static void hoist(func::FuncOp grad) {
    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    // Returned once as an FP32 gradient: the values GradInPlace writes in
    // place once the plan gives them storage.
    DenseMap<Value, int> returned;
    for (Value v : ret.getOperands())
      ++returned[v];
    DenseMap<Value, bool> isGrad;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      isGrad[v] = returned[v] == 1 && type && type.getElementType().isF32() &&
                  grad.getResultAttr(i, graph::kGradAttr);
    }
    auto finishes = [&](Operation &op) {
      if (op.getNumResults() == 0 || !isMemoryEffectFree(&op) ||
          aliasesOperand(&op, /*evaluation=*/false) ||
          isa<graph::ConstantOp>(op))
        return false;
      return llvm::all_of(op.getResults(), [&](Value r) {
        return isGrad.lookup(r) && r.hasOneUse();
      });
    };
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      if (finishes(op))
        ops.push_back(&op);
    // Ops hoisted to the same place keep their order: each goes after the
    // one moved there before it.
    DenseMap<Operation *, Operation *> tail; // anchor (null: the top) -> last moved
    for (Operation *op : ops) {
      Operation *last = nullptr; // the latest op defining an operand
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp();
            def && def->getBlock() == &body &&
            (!last || last->isBeforeInBlock(def)))
          last = def;
      Operation *&after = tail[last];
      if (after)
        op->moveAfter(after);
      else if (last)
        op->moveAfter(last);
      else
        op->moveBefore(&body.front());
      after = op;
    }
  }
};

} // namespace
