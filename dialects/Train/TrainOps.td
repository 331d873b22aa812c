//===- TrainOps.td - The training-step dialect --------------------*- td -*-===//
//
// The optimizer epilogue as explicit ops on tensors: unscale + overflow check
// + sum of squares, global norm, clipping, optimizer updates that skip on
// overflow, and the loss-scale update. Scalars are 0-d tensors. Clipping ops
// take the unscale op's results, so clipping always sees unscaled gradients.
// `train-fuse-epilogue` folds them into one `train.fused_epilogue`.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_TRAIN_OPS
#define AMPC_TRAIN_OPS

include "dialects/Train/TrainAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, traits>;

// Scalars are 0-d tensors; buildable, so formats need not spell them.
class Train_Scalar<Type element, string builder> : 0DTensorOf<[element]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder." # builder # "())";
}
def Train_F32Scalar : Train_Scalar<F32, "getF32Type">;
def Train_I1Scalar : Train_Scalar<I1, "getI1Type">;
def Train_I32Scalar : Train_Scalar<I32, "getI32Type">;
def Train_I64Scalar : Train_Scalar<I64, "getI64Type">;
def Train_F32Tensor : RankedTensorOf<[F32]>;

def Train_UnscaleOp : Train_Op<"unscale", [Pure, InferTypeOpAdaptor]> {
  let summary = "Unscale all gradients, check them for inf/NaN, sum their squares";
  let description = [{
    PyTorch's `_amp_foreach_non_finite_check_and_unscale_` plus the squared
    sum of `clip_grad_norm_`, in one pass over the gradients:
    `inv = float(1 / (double(scale) * double(divisor)))`, `g' = g * inv`,
    `found_inf = any(!isfinite(g'))`, `sumsq = sum(g' * g')` (accumulated in
    a fixed order). `divisor` is the number of micro-batches (times ranks)
    the gradients were summed over.

    ```mlir
    %g0u, %g1u, %found, %sumsq = train.unscale %scale, %divisor grads(%g0, %g1) : tensor<4x8xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Train_F32Scalar:$scale, Train_F32Scalar:$divisor,
                       Variadic<Train_F32Tensor>:$grads);
  let results = (outs Variadic<Train_F32Tensor>:$unscaled,
                      Train_I1Scalar:$found_inf, Train_F32Scalar:$sumsq);
  let assemblyFormat =
      "$scale `,` $divisor `grads` `(` $grads `)` attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

def Train_GlobalNormOp : Train_Op<"global_norm", [Pure, SameOperandsAndResultType]> {
  let summary = "sqrt of a sum of squares: the global gradient norm";
  let description = [{
    ```mlir
    %norm = train.global_norm %sumsq : tensor<f32>
    ```
  }];
  let arguments = (ins Train_F32Scalar:$sumsq);
  let results = (outs Train_F32Scalar:$norm);
  let assemblyFormat = "$sumsq attr-dict `:` type($sumsq)";
}

def Train_ClipCoefOp : Train_Op<"clip_coef", [Pure, SameOperandsAndResultType]> {
  let summary = "clip_coef = min(1, max_norm / (norm + 1e-6))";
  let description = [{
    `clip_grad_norm_`'s coefficient, computed in FP32 as PyTorch does.

    ```mlir
    %coef = train.clip_coef %norm, %max_norm : tensor<f32>
    ```
  }];
  let arguments = (ins Train_F32Scalar:$norm, Train_F32Scalar:$max_norm);
  let results = (outs Train_F32Scalar:$coef);
  let assemblyFormat = "$norm `,` $max_norm attr-dict `:` type($norm)";
}

class Train_ClipOp<string mnemonic, string what>
    : Train_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = what;
  let arguments = (ins Train_F32Scalar:$limit, Variadic<Train_F32Tensor>:$grads);
  let results = (outs Variadic<Train_F32Tensor>:$clipped);
  let assemblyFormat =
      "$limit `grads` `(` $grads `)` attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

def Train_ClipByNormOp : Train_ClipOp<"clip_by_norm",
    "Multiply every gradient by the clip coefficient"> {
  let description = [{
    `g' = g * coef`; `limit` is the result of `train.clip_coef` (PyTorch
    multiplies even when the coefficient is 1).

    ```mlir
    %c0, %c1 = train.clip_by_norm %coef grads(%g0u, %g1u) : tensor<4x8xf32>, tensor<4xf32>
    ```
  }];
}

def Train_ClipByValueOp : Train_ClipOp<"clip_by_value",
    "Clamp every gradient to [-limit, limit]"> {
  let description = [{
    `clip_grad_value_`: `g' = min(max(g, -limit), limit)`.

    ```mlir
    %c0, %c1 = train.clip_by_value %limit grads(%g0u, %g1u) : tensor<4x8xf32>, tensor<4xf32>
    ```
  }];
}

def Train_AdvanceStepOp : Train_Op<"advance_step", [Pure, AllTypesMatch<["step", "result"]>]> {
  let summary = "The optimizer step counter plus one, unless the step overflowed";
  let description = [{
    A skipped step does not count: `result = found_inf ? step : step + 1`.

    ```mlir
    %t = train.advance_step %step, %found : tensor<i64>
    ```
  }];
  let arguments = (ins Train_I64Scalar:$step, Train_I1Scalar:$found_inf);
  let results = (outs Train_I64Scalar:$result);
  let assemblyFormat = "$step `,` $found_inf attr-dict `:` type($step)";
}

def Train_SgdOp : Train_Op<"sgd", [Pure,
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param", "new_momentum_buffer"]>]> {
  let summary = "torch.optim.SGD update of one parameter, skipped on overflow";
  let description = [{
    PyTorch's formulas: `d = g + weight_decay * p`; with momentum,
    `buf = d` on the first step (`step == 1`, the advanced counter) else
    `buf = momentum * buf + (1 - dampening) * d`, and `d = d + momentum * buf`
    (nesterov) or `d = buf`; then `p = p - lr * d`. When `found_inf` is true
    the parameter and buffer are returned unchanged.

    ```mlir
    %w1, %buf1 = train.sgd %w, %g, %buf, %t, %found lr(%lr) momentum(%mom) dampening(%damp) weight_decay(%wd) {nesterov} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_F32Tensor:$param, Train_F32Tensor:$grad,
      Train_F32Tensor:$momentum_buffer, Train_I64Scalar:$step,
      Train_I1Scalar:$found_inf, Train_F32Scalar:$lr, Train_F32Scalar:$momentum,
      Train_F32Scalar:$dampening, Train_F32Scalar:$weight_decay,
      UnitAttr:$nesterov);
  let results = (outs Train_F32Tensor:$new_param,
                      Train_F32Tensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `,` $step `,` $found_inf
    `lr` `(` $lr `)` `momentum` `(` $momentum `)` `dampening` `(` $dampening `)`
    `weight_decay` `(` $weight_decay `)` attr-dict `:` type($param)
  }];
}

def Train_AdamOp : Train_Op<"adam", [Pure,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "torch.optim.Adam / AdamW update of one parameter, skipped on overflow";
  let description = [{
    With `t` the advanced step counter: Adam adds `weight_decay * p` to the
    gradient, AdamW (`decoupled`) first scales `p *= 1 - lr * weight_decay`;
    then `m = lerp(m, g, 1 - beta1)`, `v = beta2 * v + (1 - beta2) * g * g`,
    `p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)`.
    When `found_inf` is true nothing changes.

    ```mlir
    %w1, %m1, %v1 = train.adam %w, %g, %m, %v, %t, %found lr(%lr) betas(%b1, %b2) eps(%eps) weight_decay(%wd) {decoupled} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_F32Tensor:$param, Train_F32Tensor:$grad,
      Train_F32Tensor:$exp_avg, Train_F32Tensor:$exp_avg_sq,
      Train_I64Scalar:$step, Train_I1Scalar:$found_inf, Train_F32Scalar:$lr,
      Train_F32Scalar:$beta1, Train_F32Scalar:$beta2, Train_F32Scalar:$eps,
      Train_F32Scalar:$weight_decay, UnitAttr:$decoupled);
  let results = (outs Train_F32Tensor:$new_param, Train_F32Tensor:$new_exp_avg,
                      Train_F32Tensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step `,` $found_inf
    `lr` `(` $lr `)` `betas` `(` $beta1 `,` $beta2 `)` `eps` `(` $eps `)`
    `weight_decay` `(` $weight_decay `)` attr-dict `:` type($param)
  }];
}

def Train_UpdateScaleOp : Train_Op<"update_scale", [Pure,
    AllTypesMatch<["scale", "new_scale"]>,
    AllTypesMatch<["growth_tracker", "new_growth_tracker", "hysteresis_left",
                   "new_hysteresis_left"]>]> {
  let summary = "Loss-scale update (GradScaler.update, with hysteresis and bounds)";
  let description = [{
    `mode = "dynamic"`: on overflow, `hysteresis_left -= 1`, the growth
    tracker resets, and once `hysteresis_left <= 0` the scale becomes
    `max(scale * backoff, min_scale)`; otherwise the tracker counts up and
    after `interval` clean steps the scale becomes `min(scale * growth,
    max_scale)` if that is finite, the tracker resets and `hysteresis_left`
    is refilled. With hysteresis 1 this is PyTorch's GradScaler.
    `mode = "static"` and `"none"` leave the state unchanged.

    ```mlir
    %s1, %tr1, %h1 = train.update_scale %s, %tr, %h, %found growth(%gf, %every) backoff(%bf) hysteresis(%hy) bounds(%lo, %hi) {mode = "dynamic"} : tensor<f32>, tensor<i32>
    ```
  }];
  let arguments = (ins Train_F32Scalar:$scale, Train_I32Scalar:$growth_tracker,
      Train_I32Scalar:$hysteresis_left, Train_I1Scalar:$found_inf,
      Train_F32Scalar:$growth_factor, Train_I32Scalar:$growth_interval,
      Train_F32Scalar:$backoff_factor, Train_I32Scalar:$hysteresis,
      Train_F32Scalar:$min_scale, Train_F32Scalar:$max_scale, StrAttr:$mode);
  let results = (outs Train_F32Scalar:$new_scale,
      Train_I32Scalar:$new_growth_tracker, Train_I32Scalar:$new_hysteresis_left);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $hysteresis_left `,` $found_inf
    `growth` `(` $growth_factor `,` $growth_interval `)` `backoff` `(` $backoff_factor `)`
    `hysteresis` `(` $hysteresis `)` `bounds` `(` $min_scale `,` $max_scale `)`
    attr-dict `:` type($scale) `,` type($growth_tracker)
  }];
  let hasVerifier = 1;
}

def Train_FusedEpilogueOp : Train_Op<"fused_epilogue", [Pure, AttrSizedOperandSegments]> {
  let summary = "The whole AMP epilogue of a training step, as one op";
  let description = [{
    What `train-fuse-epilogue` makes of the unscale, norm, clip, optimizer
    and loss-scale ops: one op a target emits as a single pass over the
    gradients for unscale/check/norm and one for clip + update, with no host
    decision in between. Semantics are exactly those of the ops it replaces,
    in their order. Which optimizer, loss-scale mode and optional parts
    (clip by norm, by value, Nesterov) it runs is the `train.config` of the
    enclosing function (`getConfig()`; stored once, there). `moments` holds SGD's
    momentum buffers or Adam's `exp_avg`, `second_moments` Adam's
    `exp_avg_sq` (empty for SGD). `hyper` holds the scalar hyperparameters,
    named by `hyper_names`.

    Results: the new parameters, moments and second moments, the new step
    counter, the new scale, growth tracker and hysteresis counter, then the
    statistics `grad_norm`, `found_inf` and `clip_coef`.

    ```mlir
    %r:9 = train.fused_epilogue params(%w) grads(%g) moments(%m) second_moments(%v)
        step(%t) scaler(%s, %tr, %hy) divisor(%d) hyper(%lr, %b1, %b2, %eps, %wd)
        {hyper_names = ["lr", "beta1", "beta2", "eps", "weight_decay"]}
        : (...) -> (...)
    ```
  }];
  let arguments = (ins Variadic<Train_F32Tensor>:$params,
      Variadic<Train_F32Tensor>:$grads, Variadic<Train_F32Tensor>:$moments,
      Variadic<Train_F32Tensor>:$second_moments, Train_I64Scalar:$step,
      Train_F32Scalar:$scale, Train_I32Scalar:$growth_tracker,
      Train_I32Scalar:$hysteresis_left, Train_F32Scalar:$divisor,
      Variadic<AnyRankedTensor>:$hyper, StrArrayAttr:$hyper_names);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    `params` `(` $params `)` `grads` `(` $grads `)` `moments` `(` $moments `)`
    `second_moments` `(` $second_moments `)` `step` `(` $step `)`
    `scaler` `(` $scale `,` $growth_tracker `,` $hysteresis_left `)`
    `divisor` `(` $divisor `)` `hyper` `(` $hyper `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    // Result groups, in order.
    ::mlir::ValueRange getNewParams() { return getResults().take_front(getParams().size()); }
    ::mlir::Value getGradNorm() { return getResults()[getResults().size() - 3]; }
    ::mlir::Value getFoundInf() { return getResults()[getResults().size() - 2]; }
    ::mlir::Value getClipCoef() { return getResults().back(); }
    // The hyperparameter operand named |name|, or null.
    ::mlir::Value getHyperValue(::llvm::StringRef name);
    // The train.config of the enclosing function (null outside one; the
    // verifier rejects that). The accessors below read it.
    ConfigAttr getConfig();
    // "sgd", "adam" or "adamw".
    ::llvm::StringRef getOptimizer() { return getConfig().getOptimizer(); }
    // "dynamic", "static" or "none".
    ::llvm::StringRef getLossScale() { return getConfig().getLossScale(); }
    // Which optional parts run.
    bool getClipNorm() { return getConfig().getClipNorm(); }
    bool getClipValue() { return getConfig().getClipValue(); }
    bool getNesterov() { return getConfig().getNesterov(); }
  }];
}

#endif // AMPC_TRAIN_OPS
