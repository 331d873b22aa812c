//===- CastCleanup.cpp - Fold and merge graph.cast ops ---------------------===//
#include "passes/amp/CastCleanup.h"

#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using ampc::graph::CastOp;

bool ampc::amp::isExactConversion(Type from, Type to) {
  return from == to || (to.isF32() && (from.isF16() || from.isBF16()));
}

unsigned ampc::amp::cleanupCasts(Block &block) {
  unsigned removed = 0;
  llvm::DenseMap<std::pair<Value, Type>, CastOp> first;
  // Block order is a topological order, so a cast's producer cast has been
  // rewritten before the cast itself, and the first of equal casts
  // precedes (and so dominates) every use of the later ones.
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto castOp = dyn_cast<CastOp>(op);
    if (!castOp)
      continue;
    if (auto inner = castOp.getInput().getDefiningOp<CastOp>())
      if (isExactConversion(graph::elementTypeOf(inner.getInput()), graph::elementTypeOf(inner)))
        castOp.getInputMutable().assign(inner.getInput());
    if (castOp.getInput().getType() == castOp.getType()) {
      castOp.replaceAllUsesWith(castOp.getInput());
      castOp.erase();
      ++removed;
      continue;
    }
    auto [it, inserted] =
        first.try_emplace({castOp.getInput(), castOp.getType()}, castOp);
    if (!inserted) {
      castOp.replaceAllUsesWith(it->second.getResult());
      castOp.erase();
      ++removed;
    }
  }
  // Erase dead casts, users first so chains of dead casts go in one sweep.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    if (isa<CastOp>(op) && op.use_empty()) {
      op.erase();
      ++removed;
    }
  }
  return removed;
}
