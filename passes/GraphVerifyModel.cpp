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
    int models = 0;
    for (Operation &op : module.getBody()->getOperations()) {
      if (isa<ampc::graph::ModelOp>(op)) {
        if (++models > 1) {
          op.emitError() << "a model file holds one graph.model";
          return signalPassFailure();
        }
      }
    }
    if (models == 0) {
      module.emitError() << "no graph.model in this file";
      signalPassFailure();
    }
  }
};
} // namespace
