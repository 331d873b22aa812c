//===- Passes.td - ampc passes -----------------------------------*- td -*-===//
//
// One pass per file in passes/; each definition's description says what the
// pass does to the IR and why. The training pipeline (`ampc-train-pipeline`)
// is assembled in Pipelines.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_PASSES
#define AMPC_PASSES

include "mlir/Pass/PassBase.td"

def GraphVerifyModel : Pass<"graph-verify-model", "mlir::ModuleOp"> {
  let summary = "Check a module holds exactly one trainable graph.model";
  let description = [{
    Model files hold one `graph.model`. This pass rejects files with none or
    with several, so every later pass and tool can assume a single model,
    and a model without a `graph.param` (there is nothing to train; the
    training pipeline could not build a step for it). `ampc check` and
    `ampc compile` both run it, so what compile rejects, check rejects.
    (Functions beside it are fine: autodiff adds `@<model>_grad`.)
  }];
}

def GraphAutocast : Pass<"graph-autocast", "mlir::ModuleOp"> {
  let summary = "Place FP16/BF16 precision per op by the AMP policy and insert casts";
  let description = [{
    PyTorch's CUDA autocast as an IR rewrite. Each compute op of every
    `graph.model` gets a precision from, in order of priority: its
    `precision` pin in the model file; a pin in the policy file (by op name
    or FILE:LINE[:COL]); its category in the policy: `lower` (the half type:
    matmul, batch_matmul, linear, conv2d, conv_transpose2d, attention),
    `fp32` (softmax, log_softmax, the norms, exp, log, pow, rsqrt,
    reciprocal, softplus, losses, reduce_sum, cumsum, upsample_nearest2d,
    upsample_bilinear2d),
    `promote` (the widest float input: add, sub, mul, div, maximum, minimum,
    where, concat) or `follow` (the first float input's type: activations,
    shape ops, pooling, dropout, embedding, reduce_max, reduce_mean, argmax,
    gather). Ops the policy does not list promote. docs/amp-policy.md lists
    every op with the PyTorch list it comes from.

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

def TrainBuildStep : Pass<"train-build-step", "mlir::ModuleOp"> {
  let summary = "Build @<model>_step: the optimizer epilogue as explicit train ops";
  let description = [{
    Reads `@<model>_grad` (the graph-autodiff contract) and adds
    `@<model>_step`, which takes the FP32 master parameters, their summed
    gradients of `loss * scale`, the optimizer state (moments, step counter),
    the scaler state (scale, growth tracker, hysteresis counter), the
    gradient divisor (micro-batches x ranks) and the runtime
    hyperparameters as explicit arguments, and returns their new values plus
    the step statistics (grad_norm, found_inf, clip_coef).

    The body is PyTorch's sequence as ops: `train.unscale` (unscale, overflow
    check, sum of squares), `train.global_norm`, optional clipping (which
    consumes the unscale op's results, so it always sees unscaled
    gradients), `train.advance_step`, one `train.sgd`/`train.adam` per
    parameter (skipped on overflow) and `train.update_scale`.

    The compiled-in configuration and the hyperparameter defaults (named as
    in runtime/HyperParams.def) are recorded on the function as one
    `#train.config` attribute, `train.config`; `train.fused_epilogue` and
    the emitters read it there.
  }];
  let dependentDialects = ["ampc::train::TrainDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect"];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"adamw\"",
           "sgd, adam or adamw">,
    Option<"lossScale", "loss-scale", "std::string", "\"none\"",
           "dynamic, static or none">,
    Option<"amp", "amp", "std::string", "\"off\"",
           "off, fp16 or bf16 (recorded in train.config)">,
    Option<"initScale", "init-scale", "double", "65536.0",
           "Initial (dynamic) or fixed (static) loss scale">,
    Option<"clipNorm", "clip-norm", "double", "0.0",
           "Clip by global norm to this value (0: off)">,
    Option<"clipValue", "clip-value", "double", "0.0",
           "Clip each gradient element to [-x, x] (0: off)">,
    Option<"accumSteps", "accum-steps", "int", "1",
           "Micro-batches per optimizer step">,
    Option<"nesterov", "nesterov", "bool", "false", "Nesterov momentum (SGD)">,
    Option<"lr", "lr", "double", "1.0e-3", "Default learning rate">,
    Option<"momentum", "momentum", "double", "0.0", "Default SGD momentum">,
    Option<"weightDecay", "weight-decay", "double", "-1.0",
           "Default weight decay (negative: torch.optim's default, 0.01 for "
           "adamw, 0 for sgd and adam)">,
    Option<"growthInterval", "growth-interval", "int", "2000",
           "Default clean steps before the scale grows">,
    Option<"hysteresis", "hysteresis", "int", "1",
           "Default overflows in a row before the scale backs off">,
  ];
}

def TrainDropEvalOutputs : Pass<"train-drop-eval-outputs", "mlir::ModuleOp"> {
  let summary = "Drop @<model>_grad's outputs other than the loss";
  let description = [{
    The training step reads only the loss and the gradients of
    `@<model>_grad`. Its other outputs (a classifier's logits) are
    evaluation's, which computes them from the `graph.model` itself, so they
    are removed from the function's results, and the ops only they read are
    erased: GPT-2's FP32 copy of its logits under AMP (2.47 GB a step) is
    one. An op that reads a model buffer stays (batch_norm updates its
    running statistics in training whatever the loss reads). The loss and
    every gradient are unchanged.
  }];
}

def TrainHalfWeightCopies : Pass<"train-half-weight-copies", "mlir::ModuleOp"> {
  let summary = "Read the half weight copies the fused epilogue keeps instead of casting masters each step";
  let description = [{
    Under AMP, `@<model>_grad` casts the FP32 master weights a GEMM reads to
    the step's AMP type (the `train.config` of `@<model>_step`) every step
    and micro-batch. Each such parameter gets an argument
    `{graph.param_copy = "name"}` of the AMP type instead, and its casts
    are replaced by it: the runtime binds it to a half copy of the master
    that the fused epilogue writes with every update (and that it recasts
    after initialization or a resumed checkpoint). Same rounding as the
    cast, so the step computes the same values. Does nothing without AMP.
  }];
}

def TrainHalfGrads : Pass<"train-half-grads", "mlir::ModuleOp"> {
  let summary = "Return weight gradients in the AMP type instead of casting them to FP32";
  let description = [{
    A gradient result of `@<model>_grad` that is a `graph.cast` of an f16
    or bf16 value to f32, the cast used by nothing else, returns the half
    value instead and the cast goes. The widening is exact, so nothing
    changes but who does it: the fused epilogue reads the half gradient,
    and the runtime widens it where it keeps FP32 gradients (accumulation,
    the data-parallel all-reduce). `rt::ParamInfo::gradType` names the
    result's type. `ampc compile --target=cuda` runs it (`--half-grads`).
  }];
}

def TrainFuseEpilogue : Pass<"train-fuse-epilogue", "mlir::ModuleOp"> {
  let summary = "Fold the epilogue ops of @<model>_step into one train.fused_epilogue";
  let description = [{
    Replaces the unscale, norm, clip, step-counter, optimizer and
    loss-scale ops built by train-build-step with one
    `train.fused_epilogue` whose operands are the function's state and
    hyperparameters and whose results are what the function returns. A
    target emits it as one pass over the gradients for unscale/check/norm
    and one for clip + update, without a host decision in between.
  }];
  let dependentDialects = ["ampc::train::TrainDialect"];
}

def KernelFuseElementwise : Pass<"kernel-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Group chains of elementwise graph ops into kernel.fused_elementwise loops";
  let description = [{
    Prepares functions and the graph.model body for emission: every
    elementwise op (add, mul, relu, cast, relu_backward, ...) goes into a
    `kernel.fused_elementwise` region together with the elementwise ops of
    the same result shape that consume it, as long as values needed
    elsewhere can still be stored by the fused loop (they become results).
    Operands of other shapes (a bias, a scalar) are read with broadcasting.
    Every other op stays a library call.
  }];
  let dependentDialects = ["ampc::kernel::KernelDialect"];
}

def KernelHoistGrads : Pass<"kernel-hoist-grads", "mlir::ModuleOp"> {
  let summary = "Finish each FP32 gradient of @<model>_grad right after its operands";
  let description = [{
    Moves each pure op whose results are all FP32 gradients returned once
    by `@<model>_grad` (under AMP, the cast of a half weight gradient) to
    just after the last op defining one of its operands. Autodiff leaves
    them at the end of the backward, where their half inputs stay live in
    the memory plan and a data-parallel step cannot start the gradient's
    all-reduce early. Values are unchanged.
  }];
}

def KernelPlanMemory : Pass<"kernel-plan-memory", "mlir::ModuleOp"> {
  let summary = "Static memory plan: one arena, buffers reused by liveness";
  let description = [{
    For each function and the graph.model body, gives every intermediate
    tensor a byte offset in one arena (`kernel.offsets` on its op; -1 for a
    reshape, which aliases its operand). Offsets are chosen first-fit in op
    order, reusing the space of tensors whose last use is behind (64-byte
    aligned). Records `kernel.arena_size` and, for comparison,
    `kernel.arena_size_no_reuse` on the function.
  }];
}

def GraphDesugar : Pass<"graph-desugar", "mlir::ModuleOp"> {
  let summary = "Rewrite shape sugar and broadcasting matmuls into core ops";
  let description = [{
    `graph.squeeze` and `graph.unsqueeze` become `graph.reshape`,
    `graph.expand` becomes `graph.broadcast_to`, and a `graph.matmul` or
    `graph.batch_matmul` whose batch dimensions broadcast (torch.matmul)
    becomes a 2-D matmul over flattened rows (`[..., M, K] x [K, N]`) or
    `graph.broadcast_to` of the operands followed by a batch_matmul with
    equal batch dimensions. A `graph.scaled_dot_product_attention` with
    `dropout_p > 0` becomes PyTorch's math path (batch_matmul, scale, masks,
    softmax, a keyed `graph.dropout`, batch_matmul), so its dropout is an
    ordinary graph.dropout. Every later pass, kernel and report then sees
    only core ops, and autodiff gives the broadcast gradients (sums over
    the broadcast dimensions) through broadcast_to's VJP. Rewritten ops keep
    the sugar op's location (its name in reports). Model loading
    (ampc::loadModelFile, so every ampc command) runs it right after
    verification; ampc-opt pass tests run it by its flag.
  }];
}

def GraphAbsorbCasts : Pass<"graph-absorb-casts", "mlir::ModuleOp"> {
  let summary = "Let FP32-computing ops read and write f16/bf16 directly";
  let description = [{
    The ops whose kernels compute in FP32 from any operand type and round
    each result once from FP32 (`graph::computesInFP32`: cross_entropy with
    class-index labels, cross_entropy_backward, layer_norm, rms_norm and
    their backward ops) absorb (a) the exact widening `graph.cast`s
    (f16/bf16 -> f32) feeding their operands (not a norm backward's
    weight: dweight has its type) and (b) the narrowing cast (f32 ->
    f16/bf16) of result 0 when every use of that result is such a cast.
    Widening is exact and the kernel rounds the FP32 value the cast would
    have rounded, so results are bitwise unchanged (the interpreter rounds
    these ops' half results through FP32 too); only the traffic of the
    casts goes (on GPT-2 small, the FP32 copy of the logits and of their
    gradient). rms_norm's default eps (the machine epsilon of the type it
    runs in) is spelled out first, so the op keeps its FP32 eps. The ops
    keep their `amp.precision = "fp32"` and rule: `ampc explain` (which
    runs autocast only, before this pass) and the IR dumps still say they
    ran in FP32. Casts from f64 or to integers, and FP32 results with any
    other use, are left alone. Runs after the backward is built, before
    elementwise fusion.

    ```mlir
    // before
    %z32 = graph.cast %z : tensor<8x50257xbf16> -> tensor<8x50257xf32>
    %l = graph.cross_entropy %z32, %y : tensor<8x50257xf32>, tensor<8xi64> -> tensor<f32>
    // after
    %l = graph.cross_entropy %z, %y : tensor<8x50257xbf16>, tensor<8xi64> -> tensor<f32>
    ```
  }];
}

def GraphFoldGemmTranspose : Pass<"graph-fold-gemm-transpose", "mlir::ModuleOp"> {
  let summary = "Read transposed GEMM operands in place through the transpose flags";
  let description = [{
    A `graph.matmul` or `graph.batch_matmul` operand defined by a
    `graph.transpose` that swaps exactly its last two axes is replaced by
    the transpose's input, and the op's `lhs_transposed` / `rhs_transposed`
    flag is toggled (a transpose of an operand already read transposed
    clears it). The GEMM libraries read the operand in place (cuBLASLt's
    and cblas' transpose flags), so the strided copy disappears: the
    backward of every linear/matmul (dW = g^T x, dA = g B^T) wrote one.
    A transpose left without users is erased; one with other users stays.
    Other permutations are not touched. The training pipeline runs it after
    autodiff, before fusion and memory planning.
  }];
}

def GraphCollapseDataMovement : Pass<"graph-collapse-data-movement", "mlir::ModuleOp"> {
  let summary = "Collapse slice/reshape/transpose chains into one strided copy";
  let description = [{
    Attention heads are split out of a fused qkv projection as `slice ->
    reshape -> transpose` and joined back in the backward as `transpose ->
    reshape -> slice_backward`: two strided copies per tensor. Where the
    composition is one strided view of the source it becomes one op:
    `reshape(slice(x))` becomes `slice(reshape(x))` when the reshape only
    splits sliced dimensions at aligned offsets (a reshape aliases its
    operand), `transpose(slice(x))` becomes a `graph.slice` with `perm`,
    and the backward's `slice_backward(reshape(h))` and
    `slice_backward(transpose(g))` the same way round. Pure data movement:
    the results are bitwise the same. Chains that are not one view (a
    reshape merging dimensions, a split sliced dimension with a stride or a
    start off the split) stay as they are. Then a sum of graph.add ops
    (any order) whose terms are slice_backward results (or equal reshapes
    of them), each used only there, with stride 1 and one perm, tiling the
    result along one axis (disjoint, no gap) becomes one `graph.concat`
    with `perm`: attention's q, k and v cotangents written into the fused
    qkv gradient by one copy instead of three zero-filled tensors and an
    add. Adding zeros is exact, so the result is bitwise the same but for
    the sign of a zero (a -0.0 in g stays -0.0 instead of -0.0 + 0.0).
    Overlapping slices, gaps, or a term with another user stay as they
    are. The training pipeline runs it after autodiff, before fusion and
    memory planning.
  }];
}

def GraphFuseBiasGrad : Pass<"graph-fuse-bias-grad", "mlir::ModuleOp"> {
  let summary = "Fuse a weight-gradient GEMM with the bias gradient of the same dY";
  let description = [{
    The backward of a linear with a bias computes `dW = dY^T X` (a 2-D
    `graph.matmul` with `lhs_transposed`, dY reshaped to `[rows, N]`) and
    `db = reduce_sum(dY)` over every axis but the last. Both become one
    `graph.matmul_bias_grad` (the GEMM plus the sum of its lhs over K),
    which cuBLASLt computes in one call with the BGRADB epilogue instead of
    reading dY again for the sum. The sum keeps its semantics (FP32
    accumulation, one rounding to dY's element type), so the CPU library
    and the interpreter give the same bits as before. Only that shape is
    fused: a reduce_sum over other axes, with keepdim or to another
    element type, one whose input is not the GEMM's transposed lhs (or a
    reshape of it keeping the last axis) and batched GEMMs are left alone.
    Every graph float type (f16, bf16, f32) fuses: where cuBLASLt has no
    algorithm for the epilogue the CUDA library runs the GEMM and the sum
    apart, as before. The
    training pipeline runs it after graph-absorb-casts, before fusion and
    memory planning.

    ```mlir
    // before
    %g2 = graph.reshape %g : tensor<8x16x32xbf16> -> tensor<128x32xbf16>
    %dw = graph.matmul %g2, %x {lhs_transposed} : tensor<128x32xbf16>, tensor<128x64xbf16> -> tensor<32x64xbf16>
    %db = graph.reduce_sum %g {axes = array<i64: 0, 1>} : tensor<8x16x32xbf16> -> tensor<32xbf16>
    // after
    %dw, %db = graph.matmul_bias_grad %g2, %x {lhs_transposed} : tensor<128x32xbf16>, tensor<128x64xbf16> -> tensor<32x64xbf16>, tensor<32xbf16>
    ```
  }];
}

def GraphFuseEmbeddingGradSum
    : Pass<"graph-fuse-embedding-grad-sum", "mlir::ModuleOp"> {
  let summary = "Add a table's other gradient inside its embedding_backward";
  let description = [{
    A `graph.add` of an f32 `graph.embedding_backward` (used only there) and
    another f32 value of its type (or a `graph.cast` of a half one) becomes
    one `graph.embedding_backward` with that value (the cast's input) as
    `init`: each row is its FP32 sum plus init's row, and a row no id names
    is init's row plus 0.0, the add's own arithmetic on the same operands,
    so the result is bitwise the same. This is a tied embedding: GPT-2's
    token table gets the scatter-add of the embedding and the LM head's dW;
    the table gradient is no longer zero-filled and read back by the add.
    The training pipeline runs it after graph-absorb-casts, before fusion
    (`fuse-embedding-grad-sum=0` turns it off, for comparison).

    ```mlir
    // before
    %e = graph.embedding_backward %ids, %g : tensor<4x16xi64>, tensor<4x16x32xf32> -> tensor<256x32xf32>
    %c = graph.cast %dw : tensor<256x32xbf16> -> tensor<256x32xf32>
    %s = graph.add %e, %c : tensor<256x32xf32>, tensor<256x32xf32> -> tensor<256x32xf32>
    // after
    %s = graph.embedding_backward %ids, %g, %dw : tensor<4x16xi64>, tensor<4x16x32xf32>, tensor<256x32xbf16> -> tensor<256x32xf32>
    ```
  }];
}

def GraphPadClasses : Pass<"graph-pad-classes", "mlir::ModuleOp"> {
  let summary = "Pad an LM head's class count to 16 bytes for the GEMMs";
  let description = [{
    A bias-free `graph.linear` whose logits only a
    `graph.cross_entropy_with_grad` (no label smoothing) reads, with a class
    count whose row is not a multiple of 16 bytes (GPT-2's 50257), gets a
    weight padded with zero rows (`graph.slice_backward`) and a bias of 0
    for the classes and -inf for the padding. exp(-inf) is 0, so the loss
    and the real classes' gradients are the same sums with exact zeros
    added (equal up to the order the kernels sum in) and the padded
    classes' gradients are 0. The dlogits' uses follow: the dX GEMM reads
    the padded weight (its K grows by zero terms), the dW GEMM writes the
    padded rows and a `graph.slice` keeps the first ones (an alias). Every
    GEMM and logits row then has 16-byte aligned rows, which cuBLASLt's TMA
    kernels need; the model, its parameters and checkpoints keep their
    shapes. When the weight is a half copy argument (`graph.param_copy`,
    train-half-weight-copies) the argument takes the padded type instead
    of a `graph.slice_backward` (the runtime keeps zero rows after the
    copy: `rt::ParamInfo::halfPadding`), and its other readers take its
    first rows.
    Other uses of the dlogits leave the step alone. The training pipeline
    runs it after graph-fuse-cross-entropy with `pad-classes=1`, which
    `ampc compile --target=cuda` sets (`--pad-classes=false` turns it off).

    ```mlir
    // before
    %z = graph.linear %x, %w : tensor<64x32xbf16>, tensor<101x32xbf16> -> tensor<64x101xbf16>
    %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<64x101xbf16>, tensor<64xi64>, tensor<f32> -> tensor<f32>, tensor<64x101xbf16>
    %dx = graph.matmul %dz, %w : tensor<64x101xbf16>, tensor<101x32xbf16> -> tensor<64x32xbf16>
    %dw = graph.matmul %dz, %x {lhs_transposed} : tensor<64x101xbf16>, tensor<64x32xbf16> -> tensor<101x32xbf16>
    // after
    %wp = graph.slice_backward %w {starts = array<i64: 0, 0>, limits = array<i64: 101, 32>} : tensor<101x32xbf16> -> tensor<104x32xbf16>
    %c = graph.constant dense<0xFF80> : tensor<3xbf16>
    %b = graph.slice_backward %c {starts = array<i64: 101>, limits = array<i64: 104>} : tensor<3xbf16> -> tensor<104xbf16>
    %zp = graph.linear %x, %wp, %b : tensor<64x32xbf16>, tensor<104x32xbf16>, tensor<104xbf16> -> tensor<64x104xbf16>
    %l, %dzp = graph.cross_entropy_with_grad %zp, %y, %g : tensor<64x104xbf16>, tensor<64xi64>, tensor<f32> -> tensor<f32>, tensor<64x104xbf16>
    %dx = graph.matmul %dzp, %wp : tensor<64x104xbf16>, tensor<104x32xbf16> -> tensor<64x32xbf16>
    %dwp = graph.matmul %dzp, %x {lhs_transposed} : tensor<64x104xbf16>, tensor<64x32xbf16> -> tensor<104x32xbf16>
    %dw = graph.slice %dwp {starts = array<i64: 0, 0>, limits = array<i64: 101, 32>} : tensor<104x32xbf16> -> tensor<101x32xbf16>
    ```
  }];
}

def GraphFuseGemmGelu : Pass<"graph-fuse-gemm-gelu", "mlir::ModuleOp"> {
  let summary = "A tanh GELU into the epilogue of the GEMM beside it (opt-in)";
  let description = [{
    Forward: a `graph.linear` whose result a `graph.gelu {approximate =
    "tanh"}` of the same type reads becomes one `graph.linear_gelu`; its
    `preactivation` result replaces the linear's (bitwise the same value),
    so the GELU's backward reads it. Backward: a
    `graph.gelu_backward {approximate = "tanh"}` whose gradient operand is a
    2-D `graph.matmul` (or a reshape of one) used only there becomes one
    `graph.matmul_gelu_backward` (the preactivation reshaped to the GEMM's
    `[M, N]` where needed). cuBLASLt computes each as one call (the
    GELU_AUX_BIAS and DGELU epilogues), which saves reading and writing the
    `[M, N]` activation or its gradient once more each way. The GELU runs
    on the GEMM's FP32 accumulator, so the result rounds once where
    PyTorch eager rounds twice: under f16/bf16 the values can differ in the
    last bit, which is why the training pipeline runs it only with
    `fuse-gemm-gelu=1` (`--fuse-gemm-gelu`), after graph-fuse-bias-grad.
    The erf GELU (cuBLASLt has no epilogue for it) and batched GEMMs are
    left alone.

    ```mlir
    // before
    %z = graph.linear %x, %w, %b : tensor<64x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<64x256xbf16>
    %h = graph.gelu %z {approximate = "tanh"} : tensor<64x256xbf16>
    %g = graph.matmul %dy, %w2 : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
    %dz = graph.gelu_backward %z, %g {approximate = "tanh"} : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
    // after
    %h, %z = graph.linear_gelu %x, %w, %b : tensor<64x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<64x256xbf16>, tensor<64x256xbf16>
    %dz = graph.matmul_gelu_backward %dy, %w2, %z : tensor<64x64xbf16>, tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
    ```
  }];
}

def GraphFusePackedAttention
    : Pass<"graph-fuse-packed-attention", "mlir::ModuleOp"> {
  let summary = "Attention reading q, k, v from the packed qkv projection";
  let description = [{
    Matches a `graph.scaled_dot_product_attention` whose q, k and v are the
    three thirds (in that order) of the last axis of one `[B, T, 3E]`
    tensor, each sliced, reshaped to `[B, T, H, D]` (H * D = E) and
    transposed to `[B, H, T, D]`, and whose result is transposed back and
    reshaped to `[B, T, E]`, every op in between used once; no mask, no
    dropout, causal or not, any scale; f16 or bf16 with a head dim the
    CUDA library's strided flash path takes (runtime/kernels/
    AttentionPath.h: a multiple of 8 up to 128). The chain becomes one
    `graph.packed_attention` (bitwise the same result: the copies are
    exact), whose kernels read q, k and v as strided views of qkv and write
    the result in place; its VJP writes one packed d(qkv). So the step
    loses the slice, transpose and concat copies around every attention.
    Other attention is left alone: there the kernels would copy q, k and v
    out of qkv (again in the backward), more traffic than the unfused
    graph's copies after graph-collapse-data-movement.
    The training pipeline runs it after graph-autocast, before
    graph-autodiff (option `fuse-packed-attention`, default on).

    ```mlir
    // before
    %q0 = graph.slice %qkv {limits = array<i64: 2, 16, 32>, starts = array<i64: 0, 0, 0>} : tensor<2x16x96xf32> -> tensor<2x16x32xf32>
    %q1 = graph.reshape %q0 : tensor<2x16x32xf32> -> tensor<2x16x4x8xf32>
    %q = graph.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
    // ... %k from [32, 64), %v from [64, 96) ...
    %a = graph.scaled_dot_product_attention %q, %k, %v {causal} : ...
    %a1 = graph.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x8xf32> -> tensor<2x16x4x8xf32>
    %o = graph.reshape %a1 : tensor<2x16x4x8xf32> -> tensor<2x16x32xf32>
    // after
    %o = graph.packed_attention %qkv {causal, heads = 4 : i64} : tensor<2x16x96xf32> -> tensor<2x16x32xf32>
    ```
  }];
}

def KernelFuseResidualNorm : Pass<"kernel-fuse-residual-norm", "mlir::ModuleOp"> {
  let summary = "Fuse the residual add into layer_norm, forward and backward";
  let description = [{
    Forward: a `kernel.fused_elementwise` whose body is exactly one f32
    `graph.add` of its two inputs (either may be widened to f32 by a
    `graph.cast` in the body), both of the loop's shape, whose sum feeds a
    `graph.layer_norm`, becomes one `kernel.add_layer_norm` -> (sum, y): the
    sum stays a result for its other users, but the norm no longer reads it
    back. Backward: a `graph.layer_norm_backward` whose f32 dx has no other
    user than a `kernel.fused_elementwise` that is exactly `add(dx, acc)`
    (acc f32, or widened by a cast) yielding the sum and optionally its
    f16/bf16 cast becomes one `kernel.layer_norm_backward_add` -> (dx_sum,
    dweight, dbias, dx_half?). Each saves a launch and a pass over the
    rows; every value is bitwise the same (the kernels add in FP32, as the
    loops did). `graph.rms_norm` and `graph.rms_norm_backward` likewise
    become `kernel.add_rms_norm` and `kernel.rms_norm_backward_add`.
    Anything else is left alone. The training pipeline runs it
    after kernel-fuse-elementwise (option `fuse-residual-norm`, default on).

    ```mlir
    // before
    %s = kernel.fused_elementwise ins(%d, %r : tensor<4x32xbf16>, tensor<4x32xf32>) {
    ^bb0(%a: tensor<4x32xbf16>, %b: tensor<4x32xf32>):
      %c = graph.cast %a : tensor<4x32xbf16> -> tensor<4x32xf32>
      %t = graph.add %b, %c : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
      kernel.yield %t : tensor<4x32xf32>
    } -> tensor<4x32xf32>
    %y = graph.layer_norm %s, %w, %bias : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xbf16>
    // after
    %s, %y = kernel.add_layer_norm %r, %d, %w, %bias {eps = 1.0e-05} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
    ```
  }];
  let dependentDialects = ["ampc::kernel::KernelDialect"];
}

def GraphSaveAttentionStats
    : Pass<"graph-save-attention-stats", "mlir::ModuleOp"> {
  let summary = "Attention's forward saves the softmax statistics its "
                "backward reads";
  let description = [{
    Where a function holds a `graph.packed_attention` and a
    `graph.packed_attention_backward` on the same qkv with the same heads,
    causal flag and scale (the forward before the backward, in one block),
    the forward becomes `graph.packed_attention_stats` (its result plus the
    f32 `[B, heads, T]` log-sum-exp of each query row) and the backward
    `graph.packed_attention_stats_backward`, which also reads the forward's
    result and statistics. The CUDA library's flash backward then reads
    them instead of running cuDNN's forward again; the values are
    unchanged (the CPU library and the interpreter compute the backward
    from qkv and g as before). The training pipeline runs it after
    graph-autodiff (option `save-attention-stats`, default on).

    ```mlir
    // before
    %o = graph.packed_attention %qkv {causal, heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
    %d = graph.packed_attention_backward %qkv, %g {causal, heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
    // after
    %o, %s = graph.packed_attention_stats %qkv {causal, heads = 4 : i64} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x4x16xf32>
    %d = graph.packed_attention_stats_backward %qkv, %o, %s, %g {causal, heads = 4 : i64} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
    ```
  }];
}

def GraphFuseCrossEntropy
    : Pass<"graph-fuse-cross-entropy", "mlir::ModuleOp"> {
  let summary = "cross_entropy and its backward as one pass over the logits";
  let description = [{
    Where a block holds a `graph.cross_entropy` (class-index labels) and a
    `graph.cross_entropy_backward` of the same logits, labels, ignore_index
    and label_smoothing, the forward first, and the backward's `g` is
    defined before the forward (in a training step, the loss-scale
    argument autodiff seeds with), both become one
    `graph.cross_entropy_with_grad` at the forward's position: the logits
    are read once for the loss and the gradient, and kernel-plan-memory
    may write the gradient over the logits. The values are the two ops'.
    The training pipeline runs it after graph-absorb-casts (option
    `fuse-cross-entropy`, default on).

    ```mlir
    // before
    %l = graph.cross_entropy %z, %y : tensor<64x10xbf16>, tensor<64xi64> -> tensor<f32>
    ...
    %dz = graph.cross_entropy_backward %z, %y, %scale : tensor<64x10xbf16>, tensor<64xi64>, tensor<f32> -> tensor<64x10xbf16>
    // after
    %l, %dz = graph.cross_entropy_with_grad %z, %y, %scale : tensor<64x10xbf16>, tensor<64xi64>, tensor<f32> -> tensor<f32>, tensor<64x10xbf16>
    ```
  }];
}

#endif // AMPC_PASSES
