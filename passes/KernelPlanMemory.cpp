//===- KernelPlanMemory.cpp - One arena, buffers reused by liveness -------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

namespace ampc {
#define GEN_PASS_DEF_KERNELPLANMEMORY
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

constexpr int64_t kAlign = 64;

int64_t bytesOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  int64_t width = (t.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  int64_t bytes = t.getNumElements() * width;
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// Ops whose results live elsewhere: data and parameters come from the
// runtime, train ops update persistent state in place.
bool needsNoStorage(Operation *op) {
  return isa<graph::InputOp, graph::ParamOp>(op) ||
         op->hasTrait<OpTrait::IsTerminator>() ||
         op->getDialect()->getNamespace() == "train";
}

struct Buffer {
  int64_t offset, size;
  size_t end; // position of the last use
};

void planBlock(Block &block, Operation *holder) {
  MLIRContext *ctx = holder->getContext();
  DenseMap<Operation *, size_t> position;
  size_t n = 0;
  for (Operation &op : block)
    position[&op] = n++;

  // Reshapes alias their operand: the root buffer lives until the last use
  // of any alias.
  DenseMap<Value, Value> rootOf;
  auto root = [&](Value v) {
    auto it = rootOf.find(v);
    return it == rootOf.end() ? v : it->second;
  };
  DenseMap<Value, size_t> end;
  for (Operation &op : block) {
    if (isa<graph::ReshapeOp>(op))
      rootOf[op.getResult(0)] = root(op.getOperand(0));
    for (Value r : op.getResults()) {
      size_t last = position[&op];
      for (Operation *user : r.getUsers())
        if (Operation *top = block.findAncestorOpInBlock(*user))
          last = std::max(last, position[top]);
      Value base = root(r);
      end[base] = std::max(end.lookup(base), last);
    }
  }

  std::map<int64_t, Buffer> live; // by offset
  int64_t arena = 0, noReuse = 0;
  for (Operation &op : block) {
    size_t now = position[&op];
    if (needsNoStorage(&op) || op.getNumResults() == 0)
      continue;
    for (auto it = live.begin(); it != live.end();)
      it = it->second.end < now ? live.erase(it) : std::next(it);
    SmallVector<int64_t> offsets;
    for (Value r : op.getResults()) {
      if (isa<graph::ReshapeOp>(op) || !isa<RankedTensorType>(r.getType())) {
        offsets.push_back(-1);
        continue;
      }
      int64_t size = bytesOf(r.getType());
      noReuse += size;
      // First fit: the lowest gap between live buffers that holds |size|.
      int64_t offset = 0;
      for (auto &[start, buf] : live) {
        if (start - offset >= size)
          break;
        offset = std::max(offset, start + buf.size);
      }
      live[offset] = Buffer{offset, size, end.lookup(r)};
      arena = std::max(arena, offset + size);
      offsets.push_back(offset);
    }
    op.setAttr(kernel::kOffsetsAttr, DenseI64ArrayAttr::get(ctx, offsets));
  }
  Type i64 = IntegerType::get(ctx, 64);
  holder->setAttr(kernel::kArenaSizeAttr, IntegerAttr::get(i64, arena));
  holder->setAttr(kernel::kArenaNoReuseAttr, IntegerAttr::get(i64, noReuse));
}

struct KernelPlanMemoryPass
    : ampc::impl::KernelPlanMemoryBase<KernelPlanMemoryPass> {
  void runOnOperation() override {
    for (Operation &op : getOperation().getBody()->getOperations()) {
      if (auto fn = dyn_cast<func::FuncOp>(op); fn && !fn.isExternal())
        planBlock(fn.getBody().front(), fn);
      else if (auto model = dyn_cast<graph::ModelOp>(op))
        planBlock(model.getBlock(), model);
    }
  }
};

} // namespace
