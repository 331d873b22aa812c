//===- GradReady.cpp - Where a gradient of the step is final --------------===//
#include "passes/GradReady.h"
#include "passes/ValueAliases.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;

Operation *ampc::lastTouch(Value v, Block &block) {
  Operation *last = nullptr;
  auto later = [&](Operation *op) {
    op = op ? block.findAncestorOpInBlock(*op) : nullptr;
    if (op && !op->hasTrait<OpTrait::IsTerminator>() &&
        (!last || last->isBeforeInBlock(op)))
      last = op;
  };
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value w = work.pop_back_val();
    later(w.getDefiningOp());
    for (Operation *user : w.getUsers()) {
      later(user);
      // An alias shares its operand's storage (no copy).
      if (aliasesOperand(user, /*evaluation=*/false))
        work.push_back(user->getResult(0));
    }
  }
  return last;
}
