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

def GraphAutodiff : Pass<"graph-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode autodiff: add func.func @<model>_grad per graph.model";
  let description = [{
    For each `graph.model @m`, adds `func.func @m_grad` (docs/ARCHITECTURE.md,
    "Autodiff output"): arguments are the model's inputs, then its
    parameters, then the loss scale (`tensor<f32>`, `graph.loss_scale`);
    results are the model's outputs (loss first), then the gradient of
    `loss * loss_scale` for every parameter, in parameter order. The body is
    the forward computation followed by its reverse: each differentiable op
    builds its vector-Jacobian product through `VJPOpInterface`, seeded at
    the loss with the loss scale (this is where loss scaling is fused).

    Only values that depend on a parameter and that the loss depends on get
    a cotangent, so integer ids and labels and data inputs get none; the
    cotangents of a value used several times are summed; a parameter the
    loss does not reach gets a zero gradient. Ops left dead are removed.

    Every `graph.dropout` without a `key` gets a unique one first (also in
    the model), so the forward mask can be recomputed in the backward.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // AMPC_PASSES
