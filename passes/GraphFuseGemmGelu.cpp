//===- GraphFuseGemmGelu.cpp - The tanh GELU in its GEMM's epilogue -------===//
//
// A transformer MLP runs linear -> gelu forward and matmul -> gelu_backward
// backward; each GELU reads and writes the [M, N] activation that its GEMM
// has just written. cuBLASLt applies the GELU (tanh form) and its
// derivative to the GEMM's FP32 accumulator in the same call (GELU_AUX_BIAS,
// DGELU), so each pair becomes one op. That rounds once where PyTorch eager
// rounds twice, so the pass is opt-in (--fuse-gemm-gelu).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSEGEMMGELU
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// linear + gelu(tanh) of its result -> linear_gelu; the linear's other
// users (the GELU's backward) read the preactivation, the same value.
void fuseForward(GeluOp gelu) {
  auto linear = gelu.getInput().getDefiningOp<LinearOp>();
  if (!linear || gelu.getApproximate() != "tanh" ||
      gelu.getResult().getType() != linear.getResult().getType() ||
      linear->getBlock() != gelu->getBlock())
    return;
  OpBuilder b(linear);
  Type t = linear.getResult().getType();
  auto fused = LinearGeluOp::create(b, linear.getLoc(), t, t,
                                    linear.getInput(), linear.getWeight(),
                                    linear.getBias());
  // Keep the AMP notes (precision and rule) of the GEMM.
  for (NamedAttribute a : linear->getDiscardableAttrs())
    fused->setAttr(a.getName(), a.getValue());
  linear.getResult().replaceAllUsesWith(fused.getPreactivation());
  gelu.getResult().replaceAllUsesWith(fused.getResult());
  gelu->erase();
  linear->erase();
}

// gelu_backward(tanh)(z, matmul(..)) with the GEMM used only there ->
// matmul_gelu_backward(.., z as [M, N]).
void fuseBackward(GeluBackwardOp gb) {
  if (gb.getApproximate() != "tanh")
    return;
  Value g = gb.getG();
  auto reshape = g.getDefiningOp<ReshapeOp>();
  if (reshape && reshape.getResult().hasOneUse())
    g = reshape.getInput();
  auto mm = g.getDefiningOp<MatmulOp>();
  if (!mm || !mm.getResult().hasOneUse() ||
      mm->getBlock() != gb->getBlock())
    return;
  auto ct = cast<RankedTensorType>(mm.getResult().getType());
  auto dxt = cast<RankedTensorType>(gb.getDx().getType());
  auto zt = cast<RankedTensorType>(gb.getX().getType());
  if (ct.getRank() != 2 ||
      cast<RankedTensorType>(mm.getLhs().getType()).getRank() != 2 ||
      cast<RankedTensorType>(mm.getRhs().getType()).getRank() != 2 ||
      ct.getElementType() != dxt.getElementType() ||
      zt.getElementType() != dxt.getElementType() ||
      zt.getNumElements() != ct.getNumElements())
    return;
  OpBuilder b(gb);
  Value z = gb.getX();
  if (zt != ct)
    z = ReshapeOp::create(b, gb.getLoc(), ct, z);
  auto fused = MatmulGeluBackwardOp::create(
      b, mm.getLoc(), ct, mm.getLhs(), mm.getRhs(), z, mm.getLhsTransposed(),
      mm.getRhsTransposed());
  // Users that view dx as [M, N] again read the fused result directly.
  for (Operation *user : llvm::make_early_inc_range(gb.getDx().getUsers()))
    if (auto r = dyn_cast<ReshapeOp>(user);
        r && r.getResult().getType() == ct) {
      r.getResult().replaceAllUsesWith(fused.getResult());
      r->erase();
    }
  if (!gb.getDx().use_empty()) {
    Value dx = fused.getResult();
    if (dxt != ct)
      dx = ReshapeOp::create(b, gb.getLoc(), dxt, dx);
    gb.getDx().replaceAllUsesWith(dx);
  }
  gb->erase();
  if (reshape && reshape.getResult().use_empty())
    reshape->erase();
  mm->erase();
}

struct GraphFuseGemmGeluPass
    : ampc::impl::GraphFuseGemmGeluBase<GraphFuseGemmGeluPass> {
  void runOnOperation() override {
    SmallVector<GeluOp> gelus;
    SmallVector<GeluBackwardOp> backwards;
    getOperation()->walk([&](Operation *op) {
      if (auto g = dyn_cast<GeluOp>(op))
        gelus.push_back(g);
      else if (auto gb = dyn_cast<GeluBackwardOp>(op))
        backwards.push_back(gb);
    });
    for (GeluOp g : gelus)
      fuseForward(g);
    for (GeluBackwardOp gb : backwards)
      fuseBackward(gb);
  }
};

} // namespace
