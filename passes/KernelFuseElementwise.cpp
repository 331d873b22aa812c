//===- KernelFuseElementwise.cpp - Elementwise chains -> fused loops ------===//
//
// Greedy, in op order: an elementwise op joins the group of one of its
// operands when it has the group's shape and every value of the group that
// is used outside it is used only after the op, so the fused loop (placed at
// its last member) still dominates those uses. Every other elementwise op
// starts a group of its own: the emitters print loops only for these.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace ampc {
#define GEN_PASS_DEF_KERNELFUSEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

struct Group {
  SmallVector<Operation *> ops;
  ArrayRef<int64_t> shape;
};

ArrayRef<int64_t> resultShape(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getShape();
}

// True if |op| can join |group|: see the file comment.
bool canJoin(const Group &group, Operation *op) {
  Block *block = op->getBlock();
  for (Operation *member : group.ops)
    for (Operation *user : member->getUsers()) {
      if (user == op || llvm::is_contained(group.ops, user))
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top || !op->isBeforeInBlock(top))
        return false;
    }
  return true;
}

void materialize(Group &group) {
  auto inGroup = [&](Operation *op) {
    return llvm::is_contained(group.ops, op);
  };
  SmallVector<Value> inputs, outputs;
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if ((!def || !inGroup(def)) && !llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *u) { return !inGroup(u); }))
        outputs.push_back(result);
  }
  if (outputs.empty()) { // dead code: nothing to compute
    for (Operation *op : llvm::reverse(group.ops))
      op->erase();
    return;
  }
  Operation *last = group.ops.back();
  OpBuilder b(last);
  auto fused = kernel::FusedElementwiseOp::create(
      b, last->getLoc(), ValueRange(outputs).getTypes(), inputs);
  Block *body = new Block();
  fused.getBody().push_back(body);
  IRMapping map;
  for (Value in : inputs)
    map.map(in, body->addArgument(in.getType(), in.getLoc()));
  b.setInsertionPointToEnd(body);
  for (Operation *op : group.ops)
    b.clone(*op, map);
  SmallVector<Value> yielded;
  for (Value out : outputs)
    yielded.push_back(map.lookup(out));
  kernel::YieldOp::create(b, last->getLoc(), yielded);
  for (auto [out, now] : llvm::zip(outputs, fused.getResults()))
    out.replaceUsesWithIf(now, [&](OpOperand &use) {
      return !inGroup(use.getOwner());
    });
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
}

void fuseBlock(Block &block) {
  std::vector<Group> groups;
  DenseMap<Operation *, size_t> groupOf;
  for (Operation &op : block) {
    if (!kernel::isFusableElementwise(&op) || op.getNumResults() != 1)
      continue;
    ArrayRef<int64_t> shape = resultShape(&op);
    std::optional<size_t> chosen;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      auto it = def ? groupOf.find(def) : groupOf.end();
      if (it == groupOf.end())
        continue;
      Group &g = groups[it->second];
      if (g.shape == shape && canJoin(g, &op)) {
        chosen = it->second;
        break;
      }
    }
    if (!chosen) {
      chosen = groups.size();
      groups.push_back(Group{{}, shape});
    }
    groups[*chosen].ops.push_back(&op);
    groupOf[&op] = *chosen;
  }
  for (Group &g : groups)
    materialize(g);
}

struct KernelFuseElementwisePass
    : ampc::impl::KernelFuseElementwiseBase<KernelFuseElementwisePass> {
  void runOnOperation() override {
    for (Operation &op : getOperation().getBody()->getOperations()) {
      if (auto fn = dyn_cast<func::FuncOp>(op); fn && !fn.isExternal())
        fuseBlock(fn.getBody().front());
      else if (auto model = dyn_cast<graph::ModelOp>(op))
        fuseBlock(model.getBlock());
    }
  }
};

} // namespace
