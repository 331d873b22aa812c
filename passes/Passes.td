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

def GraphAutocast : Pass<"graph-autocast", "mlir::ModuleOp"> {
  let summary = "Place FP16/BF16 precision per op by the AMP policy and insert casts";
  let description = [{
    PyTorch's CUDA autocast as an IR rewrite. Each compute op of every
    `graph.model` gets a precision from, in order of priority: its
    `precision` pin in the model file; a pin in the policy file (by op name
    or FILE:LINE[:COL]); its category in the policy: `lower` (the half type:
    matmul, batch_matmul, linear, conv2d, attention), `fp32` (softmax,
    log_softmax, layer_norm, rms_norm, exp, log, pow, rsqrt, losses,
    reduce_sum/mean), `promote` (the widest float input: add, sub, mul, div,
    concat) or `follow` (the first float input's type: activations, shape
    ops, pooling, dropout, embedding, reduce_max). Ops the policy does not
    list promote.

    `graph.cast` ops are inserted where an operand is not in the op's
    precision; one cast per value and type (so each FP32 parameter gets one
    half copy however many ops use it), placed right after the value's
    definition. Cast chains whose first step is exact (f16 -> f32 -> f16)
    fold; inexact ones (f32 -> f16 -> f32) stay. Parameters stay FP32
    (master weights), integer tensors are never cast, and the model's
    outputs are cast back to their declared types so its interface does not
    change (the loss is FP32 in any case).

    Every decided op carries `amp.precision` ("fp32", "fp16", "bf16") and
    `amp.rule`, the rule that decided it, e.g. "lower-list (gemm)",
    "fp32-list (normalization)", "promote (widest input: f32)",
    "follows operand 0", "pin (model file)", "pin (policy file line 3)".
    docs/amp-policy.md describes the policy file format and every rule.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"fp16\"",
           "The half type: fp16 or bf16">,
    Option<"policy", "policy", "std::string", /*default=*/"\"\"",
           "A policy file amending or replacing the default lists "
           "(docs/amp-policy.md); empty: the default policy">,
  ];
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
