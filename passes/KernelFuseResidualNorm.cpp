//===- KernelFuseResidualNorm.cpp - The residual add inside layer_norm ----===//
//
// A pre-norm transformer block adds to the FP32 residual stream and
// normalises the sum: after kernel-fuse-elementwise that is a loop writing
// the sum and a layer_norm reading it back, and in the backward a
// layer_norm_backward writing dx and a loop reading it back to add the
// residual gradient (and cast the sum to half for the next GEMMs). Each
// pair becomes one row kernel (kernel.add_layer_norm,
// kernel.layer_norm_backward_add; kernel.add_rms_norm and
// kernel.rms_norm_backward_add for RMS norm) that adds in FP32 as the loop
// did, so every value is bitwise the same. Only the exact shapes below are matched;
// anything else is left to the loops.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/GraphGradOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

namespace ampc {
#define GEN_PASS_DEF_KERNELFUSERESIDUALNORM
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

// The loop's input read by |v| (a region argument, or the exact widening
// cast of one to f32); null otherwise.
Value loopInput(kernel::FusedElementwiseOp loop, Value v) {
  if (auto cast = v.getDefiningOp<graph::CastOp>()) {
    if (!elementOf(cast->getResult(0)).isF32())
      return {};
    Type from = elementOf(cast->getOperand(0));
    if (!from.isF16() && !from.isBF16())
      return {};
    v = cast->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &loop.getBody().front())
    return {};
  return loop.getInputs()[arg.getArgNumber()];
}

struct ResidualAdd {
  graph::AddOp add;
  Value lhs, rhs; // the loop inputs, in the add's order
  graph::CastOp half; // the sum's f16/bf16 cast, when the loop yields one
};

// |loop| is exactly one f32 add of its two inputs (each possibly widened by
// a cast), of the loop's shape, yielding the sum and, when |allowHalf|, also
// the sum's cast to f16/bf16. Nothing else in the body.
std::optional<ResidualAdd> matchResidualAdd(kernel::FusedElementwiseOp loop,
                                            bool allowHalf) {
  if (loop.getInputs().size() != 2)
    return std::nullopt;
  auto shape = cast<RankedTensorType>(loop.getResult(0).getType()).getShape();
  for (Value in : loop.getInputs())
    if (cast<RankedTensorType>(in.getType()).getShape() != shape)
      return std::nullopt; // broadcasting reads: not a row kernel's
  ResidualAdd m{};
  unsigned casts = 0, others = 0;
  for (Operation &op : loop.getBody().front().without_terminator()) {
    if (auto add = dyn_cast<graph::AddOp>(op)) {
      if (m.add)
        return std::nullopt;
      m.add = add;
    } else if (auto c = dyn_cast<graph::CastOp>(op)) {
      ++casts;
      Type to = elementOf(c->getResult(0));
      if (c->getOperand(0).getDefiningOp<graph::AddOp>() &&
          (to.isF16() || to.isBF16())) {
        if (m.half)
          return std::nullopt;
        m.half = c;
      }
    } else {
      ++others;
    }
  }
  if (!m.add || others || !elementOf(m.add->getResult(0)).isF32())
    return std::nullopt;
  m.lhs = loopInput(loop, m.add->getOperand(0));
  m.rhs = loopInput(loop, m.add->getOperand(1));
  if (!m.lhs || !m.rhs || m.lhs == m.rhs ||
      !elementOf(m.add->getOperand(0)).isF32() ||
      !elementOf(m.add->getOperand(1)).isF32())
    return std::nullopt;
  if (m.half && (!allowHalf || m.half->getOperand(0) != m.add->getResult(0)))
    return std::nullopt;
  // Every cast is a widened input or the sum's half copy.
  unsigned widened = (m.add->getOperand(0).getDefiningOp() ? 1 : 0) +
                     (m.add->getOperand(1).getDefiningOp() ? 1 : 0);
  if (casts != widened + (m.half ? 1 : 0))
    return std::nullopt;
  // The loop yields the sum (and its half copy), nothing else.
  auto yield = cast<kernel::YieldOp>(loop.getBody().front().getTerminator());
  SmallVector<Value> want{m.add->getResult(0)};
  if (m.half)
    want.push_back(m.half->getResult(0));
  if (yield.getValues().size() != want.size())
    return std::nullopt;
  for (Value v : want)
    if (!llvm::is_contained(yield.getValues(), v))
      return std::nullopt;
  return m;
}

// The loop's result holding |v| (a yielded value).
Value loopResult(kernel::FusedElementwiseOp loop, Value v) {
  auto yield = cast<kernel::YieldOp>(loop.getBody().front().getTerminator());
  for (auto [i, y] : llvm::enumerate(yield.getValues()))
    if (y == v)
      return loop.getResult(i);
  return {};
}

// True when |v| is defined before |op| in its block (or is an argument of
// a block holding |op|).
bool definedBefore(Value v, Operation *op) {
  if (!v)
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner()->findAncestorOpInBlock(*op) != nullptr;
  Operation *def = v.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

// Every user of the results of |op| comes after |at| (in its block).
bool usedOnlyAfter(Operation *op, Operation *at, Operation *except) {
  for (Operation *user : op->getUsers()) {
    if (user == except)
      continue;
    Operation *u = at->getBlock()->findAncestorOpInBlock(*user);
    if (!u || !at->isBeforeInBlock(u))
      return false;
  }
  return true;
}

// loop {add} -> layer_norm (rms_norm): one kernel.add_layer_norm
// (kernel.add_rms_norm).
bool fuseForward(kernel::FusedElementwiseOp loop) {
  std::optional<ResidualAdd> m = matchResidualAdd(loop, false);
  if (!m)
    return false;
  Value sum = loop.getResult(0);
  Operation *norm = nullptr;
  Value weight, bias;
  for (Operation *user : sum.getUsers()) {
    if (user->getBlock() != loop->getBlock() || user->getOperand(0) != sum)
      continue;
    if (auto ln = dyn_cast<graph::LayerNormOp>(user)) {
      norm = ln, weight = ln.getWeight(), bias = ln.getBias();
      break;
    }
    if (auto rms = dyn_cast<graph::RmsNormOp>(user)) {
      norm = rms, weight = rms.getWeight();
      break;
    }
  }
  if (!norm)
    return false;
  // At the loop when the norm's parameters exist there, else at the norm
  // when the sum's other users all come after it.
  Operation *at = loop;
  if (!definedBefore(weight, loop) || !definedBefore(bias, loop)) {
    if (!usedOnlyAfter(loop, norm, norm))
      return false;
    at = norm;
  }
  OpBuilder b(at);
  TypeRange types{sum.getType(), norm->getResult(0).getType()};
  Operation *fused;
  if (auto ln = dyn_cast<graph::LayerNormOp>(norm))
    fused = kernel::AddLayerNormOp::create(b, norm->getLoc(), types, m->lhs,
                                           m->rhs, weight, bias,
                                           ln.getEpsAttr());
  else
    fused = kernel::AddRmsNormOp::create(
        b, norm->getLoc(), types, m->lhs, m->rhs, weight,
        cast<graph::RmsNormOp>(norm).getEpsAttr());
  sum.replaceAllUsesWith(fused->getResult(0));
  norm->getResult(0).replaceAllUsesWith(fused->getResult(1));
  norm->erase();
  loop->erase();
  return true;
}

// layer_norm_backward (rms_norm_backward) -> loop {add dx, acc; cast?}:
// one kernel.layer_norm_backward_add (kernel.rms_norm_backward_add).
bool fuseBackward(kernel::FusedElementwiseOp loop) {
  std::optional<ResidualAdd> m = matchResidualAdd(loop, true);
  if (!m)
    return false;
  Operation *back = nullptr;
  Value acc;
  for (auto [dx, other] : {std::pair(m->lhs, m->rhs), std::pair(m->rhs, m->lhs)}) {
    Operation *def = dx.getDefiningOp();
    if (isa_and_nonnull<graph::LayerNormBackwardOp, graph::RmsNormBackwardOp>(
            def) &&
        def->getResult(0) == dx && dx.hasOneUse() && elementOf(dx).isF32() &&
        def->getBlock() == loop->getBlock()) {
      back = def;
      acc = other;
      break;
    }
  }
  if (!back)
    return false;
  // At the norm's backward when acc exists there (its weight gradients'
  // users stay after it), else at the loop when nothing uses the weight
  // gradients before it.
  Operation *at = back;
  if (!definedBefore(acc, back)) {
    if (!usedOnlyAfter(back, loop, loop))
      return false;
    at = loop;
  }
  Value sum = loopResult(loop, m->add->getResult(0));
  Value half = m->half ? loopResult(loop, m->half->getResult(0)) : Value();
  // dx_sum, the parameter gradients, then the half copy when wanted.
  SmallVector<Type> types{sum.getType()};
  for (Value r : back->getResults().drop_front())
    types.push_back(r.getType());
  if (half)
    types.push_back(half.getType());
  OpBuilder b(at);
  Value x = back->getOperand(0), w = back->getOperand(1),
        g = back->getOperand(2);
  Operation *fused;
  if (auto ln = dyn_cast<graph::LayerNormBackwardOp>(back))
    fused = kernel::LayerNormBackwardAddOp::create(b, back->getLoc(), types, x,
                                                   w, g, acc, ln.getEpsAttr());
  else
    fused = kernel::RmsNormBackwardAddOp::create(
        b, back->getLoc(), types, x, w, g, acc,
        cast<graph::RmsNormBackwardOp>(back).getEpsAttr());
  sum.replaceAllUsesWith(fused->getResult(0));
  unsigned params = back->getNumResults() - 1;
  for (unsigned i = 1; i <= params; ++i)
    back->getResult(i).replaceAllUsesWith(fused->getResult(i));
  if (half)
    half.replaceAllUsesWith(fused->getResult(params + 1));
  loop->erase();
  back->erase();
  return true;
}

struct KernelFuseResidualNormPass
    : ampc::impl::KernelFuseResidualNormBase<KernelFuseResidualNormPass> {
  void runOnOperation() override {
    SmallVector<kernel::FusedElementwiseOp> loops;
    getOperation().walk(
        [&](kernel::FusedElementwiseOp loop) { loops.push_back(loop); });
    // Each match erases only its own loop, so the list stays valid.
    for (kernel::FusedElementwiseOp loop : loops)
      if (!fuseForward(loop))
        fuseBackward(loop);
  }
};

} // namespace
