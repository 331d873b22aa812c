//===- TrainHalfGrads.cpp - Weight gradients returned in half precision ---===//
//
// Under autocast a GEMM's weight and bias gradients come out in the AMP
// type and autodiff casts them to FP32 (the master's type) as
// @<model>_grad's results: one launch per weight and bias (96 for GPT-2
// small), reading 2 and writing 4 bytes per parameter, before the fused
// epilogue reads the 4 bytes twice. The
// widening is exact, so a gradient whose only use is that cast can leave
// the step in half precision: the fused epilogue widens it as it reads it
// (runtime/cuda/Epilogue.h), and the runtime widens it itself where it must
// hold FP32 gradients (accumulation over micro-batches, the data-parallel
// all-reduce, --dump-step: Model::requireFloatGrads). Every value the step
// and the epilogue compute is bitwise the same.
//
// rt::ParamInfo::gradType tells the runtime which gradients come in half.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/GradFunctions.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

namespace ampc {
#define GEN_PASS_DEF_TRAINHALFGRADS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

struct TrainHalfGradsPass
    : ampc::impl::TrainHalfGradsBase<TrainHalfGradsPass> {
  void runOnOperation() override {
    for (func::FuncOp grad : definedGradFunctions(getOperation()))
      narrow(grad);
  }

  static void narrow(func::FuncOp grad) {
    auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
    SmallVector<Type> results(grad.getResultTypes());
    for (OpOperand &operand : ret->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      auto c = operand.get().getDefiningOp<graph::CastOp>();
      if (!c || !grad.getResultAttr(i, graph::kGradAttr) ||
          !c.getResult().hasOneUse())
        continue;
      auto to = cast<RankedTensorType>(c.getType());
      auto from = cast<RankedTensorType>(c.getOperand().getType());
      Type e = from.getElementType();
      if (!to.getElementType().isF32() || !(e.isF16() || e.isBF16()))
        continue;
      operand.set(c.getOperand());
      results[i] = from;
      c.erase();
    }
    grad.setType(FunctionType::get(grad.getContext(),
                                   grad.getArgumentTypes(), results));
  }
};

} // namespace
