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
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>

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
  // Uses of members not yet judged, by the block position of the user's
  // ancestor in the block: an entry is judged once the scan reaches it.
  std::multimap<size_t, Operation *> pending;
  // Set once a member has a use the fused loop could not dominate: a use
  // outside the block, or one before the op being scanned that stayed out of
  // the group. Ops are scanned in order and join only as they are scanned, so
  // such a use stays outside for good.
  bool closed = false;
};

ArrayRef<int64_t> resultShape(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getShape();
}

// True if |op| (at |pos|) can join group |id|: see the file comment. Every
// op before |op| has been scanned, so a pending use before |pos| whose user is
// not in the group never will be; such uses close the group. One at |pos|
// belongs to |op| itself or to an op nested in it: only the former is fine.
bool canJoin(std::vector<Group> &groups, size_t id, Operation *op, size_t pos,
             const DenseMap<Operation *, size_t> &groupOf) {
  Group &group = groups[id];
  auto it = group.pending.begin();
  for (; !group.closed && it != group.pending.end() && it->first < pos; ++it) {
    auto g = groupOf.find(it->second);
    if (g == groupOf.end() || g->second != id)
      group.closed = true;
  }
  group.pending.erase(group.pending.begin(), it);
  if (group.closed)
    return false;
  for (; it != group.pending.end() && it->first == pos; ++it)
    if (it->second != op)
      return false;
  return true;
}

void materialize(Group &group) {
  SmallPtrSet<Operation *, 16> members(group.ops.begin(), group.ops.end());
  auto inGroup = [&](Operation *op) { return members.contains(op); };
  SetVector<Value> inputs;
  SmallVector<Value> outputs;
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !inGroup(def))
        inputs.insert(operand);
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
      b, last->getLoc(), ValueRange(outputs).getTypes(),
      inputs.getArrayRef());
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
  DenseMap<Operation *, size_t> position;
  size_t n = 0;
  for (Operation &op : block)
    position[&op] = n++;
  std::vector<Group> groups;
  DenseMap<Operation *, size_t> groupOf;
  for (Operation &op : block) {
    if (!kernel::isFusableElementwise(&op) || op.getNumResults() != 1)
      continue;
    size_t pos = position.lookup(&op);
    ArrayRef<int64_t> shape = resultShape(&op);
    std::optional<size_t> chosen;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      auto it = def ? groupOf.find(def) : groupOf.end();
      if (it == groupOf.end())
        continue;
      size_t id = it->second;
      if (groups[id].shape == shape && canJoin(groups, id, &op, pos, groupOf)) {
        chosen = id;
        break;
      }
    }
    if (!chosen) {
      chosen = groups.size();
      groups.push_back(Group{{}, shape, {}, false});
    }
    Group &g = groups[*chosen];
    g.ops.push_back(&op);
    groupOf[&op] = *chosen;
    for (Operation *user : op.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        g.closed = true;
      else
        g.pending.emplace(position.lookup(top), user);
    }
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
