//===- GraphVerifyModel.cpp - One graph.model per module ------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHVERIFYMODEL
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace {
struct GraphVerifyModelPass
    : ampc::impl::GraphVerifyModelBase<GraphVerifyModelPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ampc::graph::ModelOp model;
    for (Operation &op : module.getBody()->getOperations()) {
      if (auto m = dyn_cast<ampc::graph::ModelOp>(op)) {
        if (model) {
          op.emitError() << "a model file holds one graph.model";
          return signalPassFailure();
        }
        model = m;
      }
    }
    if (!model) {
      module.emitError() << "no graph.model in this file";
      return signalPassFailure();
    }
    // Training needs something to train: `ampc compile` could only fail
    // later (train-build-step), so `ampc check` rejects it here too.
    if (model.getBlock().getOps<ampc::graph::ParamOp>().empty()) {
      model.emitError() << "model @" << model.getSymName()
                        << " has no parameters: there is nothing to train "
                           "(declare one with graph.param)";
      return signalPassFailure();
    }
  }
};
} // namespace
