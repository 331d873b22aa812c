//===- TrainAttrs.td - Attributes of the training-step dialect ----*- td -*-===//
#ifndef AMPC_TRAIN_ATTRS
#define AMPC_TRAIN_ATTRS

include "dialects/Train/TrainDialect.td"
include "mlir/IR/AttrTypeBase.td"

// `true` / `false`.
def Train_BoolParameter : AttrParameter<"bool", "a flag"> {
  let parser = "::ampc::train::parseBoolParameter($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

def Train_ConfigAttr : AttrDef<Train_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "The configuration of a training step, in one place";
  let description = [{
    What `ampc compile` fixed in the code of `@<model>_step` (set by
    `train-build-step`, read by `train.fused_epilogue` and the emitters):
    the AMP mode, the optimizer, the loss-scale mode, whether Nesterov
    momentum and clipping by norm / by value are compiled in, the
    micro-batches per optimizer step, and the compiled-in defaults of the
    runtime hyper-parameters (keys and types from runtime/HyperParams.def:
    f32 or i32; a setting left out takes the runtime's default).

    ```mlir
    func.func @mlp_step(...) attributes {train.config = #train.config<
        amp = "fp16", optimizer = "adamw", loss_scale = "dynamic",
        nesterov = false, clip_norm = true, clip_value = false,
        accum_steps = 1, defaults = {clip_norm = 1.0 : f32, lr = 1.0e-3 : f32}>}
    ```
  }];
  let parameters = (ins
      StringRefParameter<"off, fp16 or bf16">:$amp,
      StringRefParameter<"sgd, adam or adamw">:$optimizer,
      StringRefParameter<"dynamic, static or none">:$loss_scale,
      Train_BoolParameter:$nesterov,
      Train_BoolParameter:$clip_norm,
      Train_BoolParameter:$clip_value,
      "int64_t":$accum_steps,
      "::mlir::DictionaryAttr":$defaults);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // AMPC_TRAIN_ATTRS
