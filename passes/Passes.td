//===- Passes.td - ampc passes -----------------------------------*- td -*-===//
//
// One pass per file in passes/; each definition's description says what the
// pass does to the IR and why. Pipelines are assembled in Pipelines.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_PASSES
#define AMPC_PASSES

include "mlir/Pass/PassBase.td"

def GraphVerifyModel : Pass<"graph-verify-model", "mlir::ModuleOp"> {
  let summary = "Check a module holds exactly one graph.model and nothing else";
  let description = [{
    Model files hold one `graph.model`. This pass rejects files with none,
    with several, or with other top-level ops, so every later pass and tool
    can assume a single model.
  }];
}

#endif // AMPC_PASSES
