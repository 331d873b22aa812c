//===- TrainHalfWeightCopies.cpp - Half weights kept between steps ---------===//
//
// Under autocast @<model>_grad starts by casting each FP32 master weight a
// GEMM reads to the AMP type: every step (and every micro-batch) reads 4
// and writes 2 bytes per such parameter, in one launch per tensor (97 for
// GPT-2 small). The fused epilogue already reads every master it updates,
// so it can write the half copy as it goes (2 bytes per parameter,
// runtime/cuda/Epilogue.h): the casts become arguments the runtime binds to
// those copies. Rounding is the cast's (round to nearest even), so every
// value the step computes is bitwise the same.
//
// A skipped step leaves masters and copies alike; the runtime recasts all
// copies after anything else writes the masters (initialization, a resumed
// checkpoint). Only casts to the step's AMP type are taken (a hand-written
// cast to the other half type stays a cast).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Train/TrainOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

namespace ampc {
#define GEN_PASS_DEF_TRAINHALFWEIGHTCOPIES
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

// The AMP element type @<model>_step was built for; null when AMP is off.
Type ampType(func::FuncOp step) {
  auto config = step->getAttrOfType<train::ConfigAttr>(train::kConfigAttr);
  if (!config)
    return {};
  MLIRContext *ctx = step.getContext();
  if (config.getAmp() == "fp16")
    return Float16Type::get(ctx);
  if (config.getAmp() == "bf16")
    return BFloat16Type::get(ctx);
  return {};
}

struct TrainHalfWeightCopiesPass
    : ampc::impl::TrainHalfWeightCopiesBase<TrainHalfWeightCopiesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (graph::ModelOp model : module.getOps<graph::ModelOp>()) {
      std::string name = model.getSymName().str();
      auto grad = module.lookupSymbol<func::FuncOp>(name + "_grad");
      auto step = module.lookupSymbol<func::FuncOp>(name + "_step");
      if (!grad || !step)
        continue;
      if (Type half = ampType(step))
        useCopies(grad, half);
    }
  }

  static void useCopies(func::FuncOp grad, Type half) {
    unsigned numArgs = grad.getNumArguments();
    for (unsigned i = 0; i < numArgs; ++i) {
      auto name = grad.getArgAttrOfType<StringAttr>(i, graph::kParamAttr);
      if (!name)
        continue;
      BlockArgument master = grad.getArgument(i);
      SmallVector<graph::CastOp> casts;
      for (Operation *user : master.getUsers())
        if (auto c = dyn_cast<graph::CastOp>(user))
          if (getElementTypeOrSelf(c.getType()) == half)
            casts.push_back(c);
      if (casts.empty())
        continue;
      auto type = cast<RankedTensorType>(casts.front().getType());
      unsigned k = grad.getNumArguments();
      if (failed(grad.insertArgument(
              k, type,
              DictionaryAttr::get(
                  grad.getContext(),
                  {NamedAttribute(StringAttr::get(grad.getContext(),
                                                  graph::kParamCopyAttr),
                                  name)}),
              master.getLoc())))
        continue;
      Value copy = grad.getArgument(k);
      for (graph::CastOp c : casts) {
        c.getResult().replaceAllUsesWith(copy);
        c.erase();
      }
    }
  }
};

} // namespace
