//===- TrainDropEvalOutputs.cpp - @m_grad returns only what training reads -===//
//
// The training step reads the loss and the gradients of @<model>_grad and
// nothing else; the model's other outputs (a classifier's logits) are what
// evaluation reads, and it computes them from the graph.model itself. Left
// in @<model>_grad they cost every step their forward-only work: the FP32
// copy of GPT-2's 8192 x 50257 logits under AMP is 2.47 GB of traffic.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

namespace ampc {
#define GEN_PASS_DEF_TRAINDROPEVALOUTPUTS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

struct TrainDropEvalOutputsPass
    : ampc::impl::TrainDropEvalOutputsBase<TrainDropEvalOutputsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (graph::ModelOp model : module.getOps<graph::ModelOp>()) {
      auto grad = module.lookupSymbol<func::FuncOp>(
          (model.getSymName() + "_grad").str());
      if (grad && failed(dropEvalOutputs(grad)))
        return signalPassFailure();
    }
  }

  static LogicalResult dropEvalOutputs(func::FuncOp grad) {
    llvm::BitVector drop(grad.getNumResults());
    for (unsigned i = 0; i < grad.getNumResults(); ++i)
      if (auto o = grad.getResultAttrOfType<StringAttr>(i, graph::kOutputAttr))
        if (o.getValue() != "loss")
          drop.set(i);
    if (drop.none())
      return success();
    Block &body = grad.getBody().front();
    body.getTerminator()->eraseOperands(drop);
    if (failed(grad.eraseResults(drop)))
      return failure();
    // What only those outputs read is dead now, except an op that reads a
    // model buffer: batch_norm updates its running statistics in training
    // whether or not the loss reads its result (as torch.nn.BatchNorm in
    // train() mode does for every forward). Last to first, so a chain dies
    // in one sweep (a reverse iterator cannot survive erasing the op it
    // stands on).
    auto readsBuffer = [&](Operation *op) {
      return llvm::any_of(op->getOperands(), [&](Value v) {
        auto arg = dyn_cast<BlockArgument>(v);
        return arg && arg.getOwner() == &body &&
               grad.getArgAttr(arg.getArgNumber(), graph::kBufferAttr);
      });
    };
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op) && !readsBuffer(op))
        op->erase();
    return success();
  }
};

} // namespace
