//===- TrainDialect.td - The training-step dialect ----------------*- td -*-===//
#ifndef AMPC_TRAIN_DIALECT
#define AMPC_TRAIN_DIALECT

include "mlir/IR/OpBase.td"

def Train_Dialect : Dialect {
  let name = "train";
  let cppNamespace = "::ampc::train";
  let summary = "The training step: AMP epilogue and optimizer updates";
  let description = [{
    Ops built by `train-build-step` from a model's `_grad` function. They
    make every step of PyTorch's `GradScaler.unscale_` + `clip_grad_norm_` +
    `optimizer.step` + `GradScaler.update` visible in the IR. The step
    function's configuration is one `#train.config` attribute.
  }];
  let useDefaultAttributePrinterParser = 1;
  // `train.config` on a function must be a #train.config.
  let hasOperationAttrVerify = 1;
}

#endif // AMPC_TRAIN_DIALECT
