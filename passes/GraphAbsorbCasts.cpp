//===- GraphAbsorbCasts.cpp - FP32-computing ops read/write half directly -===//
//
// Autocast gives the FP32-list ops (losses, norms) an f32 cast of each half
// operand and, for a half consumer, a narrowing cast of their f32 result;
// the backward mirrors it. Their kernels compute in FP32 from any operand
// type and round each result once from FP32 (graph::computesInFP32), so
// the casts are pure memory traffic: widening f16/bf16 -> f32 is exact, and
// the kernel's store rounds the same FP32 value the cast would have. The
// rewrite is bitwise neutral on every target and in the interpreter.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"
#include "passes/amp/CastCleanup.h"

#include "llvm/ADT/SmallVector.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHABSORBCASTS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using ampc::graph::CastOp;

namespace {

bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

// Operands whose widening cast may go: every float operand except a norm
// backward's weight (dweight has the weight's type) and the labels.
SmallVector<unsigned> absorbableOperands(Operation *op) {
  using namespace ampc::graph;
  if (isa<CrossEntropyOp>(op))
    return {0};
  if (isa<CrossEntropyBackwardOp>(op))
    return {0, 2};
  if (isa<LayerNormBackwardOp, RmsNormBackwardOp>(op))
    return {0, 2};
  SmallVector<unsigned> all; // layer_norm, rms_norm: input, weight, bias
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    all.push_back(i);
  return all;
}

// rms_norm's default eps is the machine epsilon of the type it runs in,
// read from x's (result's) type: spell it out before the types change.
void pinRmsEps(Operation *op) {
  using namespace ampc::graph;
  if (!isa<RmsNormOp, RmsNormBackwardOp>(op) || op->hasAttr("eps"))
    return;
  Type t = elementTypeOf(op->getOperand(0));
  double eps = t.isF16() ? 0x1p-10 : t.isBF16() ? 0x1p-7 : 0x1p-23;
  op->setAttr("eps", FloatAttr::get(Float64Type::get(op->getContext()), eps));
}

// (a) Exact widening casts feeding |op|.
bool absorbWidening(Operation *op) {
  bool changed = false;
  for (unsigned i : absorbableOperands(op)) {
    auto cast = op->getOperand(i).getDefiningOp<CastOp>();
    if (!cast)
      continue;
    Type from = ampc::graph::elementTypeOf(cast.getInput());
    Type to = ampc::graph::elementTypeOf(cast.getResult());
    if (!to.isF32() || !isHalf(from) ||
        !ampc::amp::isExactConversion(from, to))
      continue;
    pinRmsEps(op);
    op->setOperand(i, cast.getInput());
    if (cast->use_empty())
      cast->erase();
    changed = true;
  }
  return changed;
}

// (b) The narrowing cast of result 0 (the loss, y, dlogits or dx) when it
// is the result's only kind of use: every user a cast to one half type.
bool absorbNarrowing(Operation *op) {
  Value r = op->getResult(0);
  if (!ampc::graph::elementTypeOf(r).isF32() || r.use_empty())
    return false;
  Type target;
  for (Operation *user : r.getUsers()) {
    auto cast = dyn_cast<CastOp>(user);
    if (!cast)
      return false;
    if (target && cast.getType() != target)
      return false;
    target = cast.getType();
  }
  if (!isHalf(cast<RankedTensorType>(target).getElementType()))
    return false;
  pinRmsEps(op);
  r.setType(target);
  for (Operation *user : llvm::make_early_inc_range(r.getUsers())) {
    user->getResult(0).replaceAllUsesWith(r);
    user->erase();
  }
  return true;
}

struct GraphAbsorbCastsPass
    : ampc::impl::GraphAbsorbCastsBase<GraphAbsorbCastsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (ampc::graph::computesInFP32(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      absorbWidening(op);
      absorbNarrowing(op);
    }
  }
};

} // namespace
