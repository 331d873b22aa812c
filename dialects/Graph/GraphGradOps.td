//===- GraphGradOps.td - Backward-only ops of the Graph dialect --*- td -*-===//
//
// Most VJPs are written with forward ops; these ops exist only where a VJP
// cannot be written well otherwise (docs/ARCHITECTURE.md, "Backward ops").
// Result types are spelled and checked; element types follow the operands;
// `g` is the cotangent of the forward op's result. Internal sums accumulate
// in FP32.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_GRAPH_GRAD_OPS
#define AMPC_GRAPH_GRAD_OPS

include "dialects/Graph/GraphBase.td"
include "dialects/Graph/GraphInterfaces.td"

class Graph_GradOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

def Graph_BroadcastToOp : Graph_GradOp<"broadcast_to", [Graph_VJP]> {
  let summary = "Broadcast a tensor to a larger shape (numpy rules)";
  let description = [{
    The result type spells the target shape. Dimensions are aligned from the
    right; each input dimension equals the target's or is 1. This is the
    VJP of the reductions; its own VJP is a reduce_sum.

    ```mlir
    %y = graph.broadcast_to %x : tensor<4x1xf32> -> tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Graph_ReluBackwardOp : Graph_GradOp<"relu_backward"> {
  let summary = "Cotangent of relu: g where x > 0, else 0";
  let description = [{
    `x` is the relu input. At x == 0 the cotangent is 0 (PyTorch).

    ```mlir
    %dx = graph.relu_backward %x, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_GeluBackwardOp : Graph_GradOp<"gelu_backward"> {
  let summary = "Cotangent of gelu: g * gelu'(x)";
  let description = [{
    `approximate` is "none" (gelu'(x) = Phi(x) + x phi(x)) or "tanh" (the
    derivative of the tanh approximation), as in the forward op.

    ```mlir
    %dx = graph.gelu_backward %x, %g {approximate = "tanh"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_SiluBackwardOp : Graph_GradOp<"silu_backward"> {
  let summary = "Cotangent of silu: g * s (1 + x (1 - s)), s = sigmoid(x)";
  let description = [{
    `x` is the silu input; one rounding, as PyTorch's silu_backward.

    ```mlir
    %dx = graph.silu_backward %x, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_LeakyReluBackwardOp : Graph_GradOp<"leaky_relu_backward"> {
  let summary = "Cotangent of leaky_relu: g where x > 0, else g * negative_slope";
  let description = [{
    `x` is the leaky_relu input (PyTorch's leaky_relu_backward).

    ```mlir
    %dx = graph.leaky_relu_backward %x, %g {negative_slope = 0.2} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
                       DefaultValuedAttr<F64Attr, "0.01">:$negative_slope);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_EluBackwardOp : Graph_GradOp<"elu_backward"> {
  let summary = "Cotangent of elu: g * scale where x > 0, else g * input_scale * alpha * scale * exp(x * input_scale)";
  let description = [{
    `x` is the elu input (PyTorch's elu_backward with is_result false);
    attributes as graph.elu's.

    ```mlir
    %dx = graph.elu_backward %x, %g {alpha = 0.5} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       DefaultValuedAttr<F64Attr, "1.0">:$input_scale);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
  let hasVerifier = 1;
}

def Graph_SoftplusBackwardOp : Graph_GradOp<"softplus_backward"> {
  let summary = "Cotangent of softplus";
  let description = [{
    g where beta x > threshold, else g z / (z + 1) with z = exp(beta x)
    (PyTorch's softplus_backward). Attributes as the forward op's.

    ```mlir
    %dx = graph.softplus_backward %x, %g {beta = 1.0, threshold = 20.0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<F64Attr, "20.0">:$threshold);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_ClampBackwardOp : Graph_GradOp<"clamp_backward"> {
  let summary = "Cotangent of clamp: g where min <= x <= max, else 0";
  let description = [{
    `x` is the clamp input; an absent bound does not limit (PyTorch's
    clamp_backward).

    ```mlir
    %dx = graph.clamp_backward %x, %g {min = -1.0, max = 1.0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
                       OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_MaximumBackwardOp : Graph_GradOp<"maximum_backward"> {
  let summary = "Cotangent of maximum(a, b) with respect to a";
  let description = [{
    g where a > b, g / 2 where a == b, 0 where a < b (and g where a or b is
    NaN), as PyTorch's maximum backward. minimum's cotangents are this op
    with the operands swapped. a, b and g all have the result's type (the
    VJP broadcasts operands first).

    ```mlir
    %da = graph.maximum_backward %a, %b, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$a, Graph_FloatTensor:$b,
                       Graph_FloatTensor:$g);
  let results = (outs Graph_FloatTensor:$da);
  let assemblyFormat = [{
    $a `,` $b `,` $g attr-dict `:` type($a) `,` type($b) `,` type($g) `->` type($da)
  }];
}

def Graph_Conv2dBackwardInputOp : Graph_GradOp<"conv2d_backward_input"> {
  let summary = "Cotangent of conv2d's input (a transposed convolution)";
  let description = [{
    `g: [N, O, OH, OW]` is the cotangent of the conv2d result, `weight:
    [O, C/groups, KH, KW]`; the result type spells the input's type
    `[N, C, H, W]` (several input sizes give the same output size under a
    stride, so it cannot be inferred). Attributes as in `graph.conv2d`.

    ```mlir
    %dx = graph.conv2d_backward_input %g, %w {padding = array<i64: 1, 1>} : tensor<8x16x28x28xf32>, tensor<16x1x3x3xf32> -> tensor<8x1x28x28xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$g, Graph_FloatTensor:$weight,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$g `,` $weight attr-dict `:` type($g) `,` type($weight) `->` type($dx)";
}

def Graph_Conv2dBackwardWeightOp : Graph_GradOp<"conv2d_backward_weight"> {
  let summary = "Cotangent of conv2d's weight";
  let description = [{
    `x: [N, C, H, W]` is the conv2d input, `g: [N, O, OH, OW]` the cotangent
    of its result; the result type spells the weight's type
    `[O, C/groups, KH, KW]`. Sums over the batch and positions accumulate
    in FP32. Attributes as in `graph.conv2d`.

    ```mlir
    %dw = graph.conv2d_backward_weight %x, %g {padding = array<i64: 1, 1>} : tensor<8x1x28x28xf32>, tensor<8x16x28x28xf32> -> tensor<16x1x3x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$dw);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dw)";
}

def Graph_MaxPool2dBackwardOp : Graph_GradOp<"max_pool2d_backward"> {
  let summary = "Cotangent of max_pool2d's input";
  let description = [{
    `x` is the pool input, `g` the cotangent of its result. Each window's
    `g` goes to the window's first maximum in row-major order (PyTorch);
    overlapping windows add up. Attributes as in `graph.max_pool2d`.

    ```mlir
    %dx = graph.max_pool2d_backward %x, %g {kernel_size = array<i64: 2, 2>} : tensor<8x16x28x28xf32>, tensor<8x16x14x14xf32> -> tensor<8x16x28x28xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
      DenseI64ArrayAttr:$kernel_size,
      OptionalAttr<DenseI64ArrayAttr>:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_AvgPool2dBackwardOp : Graph_GradOp<"avg_pool2d_backward"> {
  let summary = "Cotangent of avg_pool2d's input";
  let description = [{
    Each window's `g` divided by the full kernel area (count_include_pad
    semantics, as the forward op) goes to every input position of the
    window; overlaps add up. The result type spells the input's type.

    ```mlir
    %dx = graph.avg_pool2d_backward %g {kernel_size = array<i64: 2, 2>} : tensor<8x16x14x14xf32> -> tensor<8x16x28x28xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$g,
      DenseI64ArrayAttr:$kernel_size,
      OptionalAttr<DenseI64ArrayAttr>:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat = "$g attr-dict `:` type($g) `->` type($dx)";
}

def Graph_EmbeddingBackwardOp : Graph_GradOp<"embedding_backward"> {
  let summary = "Cotangent of an embedding table: scatter-add of g by id";
  let description = [{
    `ids: [...]`, `g: [..., D]`; the result type spells the table `[V, D]`.
    Row `ids[i]` accumulates `g[i]` (in FP32); rows never looked up are 0.

    With `init` (`[V, D]`, any float type; then `g` and the table are f32)
    each row is `init`'s row plus that FP32 sum (plus 0.0 for a row never
    looked up), rounded once: bitwise `graph.add` of the plain result and
    `init` cast to f32, which is how a tied embedding's two gradients meet.
    `graph-fuse-embedding-grad-sum` writes it, so the table gradient is not
    zero-filled and then read again by the add.

    ```mlir
    %dt = graph.embedding_backward %ids, %g : tensor<4x16xi64>, tensor<4x16x32xf32> -> tensor<256x32xf32>
    %dt2 = graph.embedding_backward %ids, %g, %dw : tensor<4x16xi64>, tensor<4x16x32xf32>, tensor<256x32xbf16> -> tensor<256x32xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$ids, Graph_FloatTensor:$g,
                       Optional<Graph_FloatTensor>:$init);
  let results = (outs Graph_FloatTensor:$dtable);
  let assemblyFormat = [{
    $ids `,` $g (`,` $init^)? attr-dict `:` type($ids) `,` type($g)
    (`,` type($init)^)? `->` type($dtable)
  }];
}

def Graph_CrossEntropyBackwardOp : Graph_GradOp<"cross_entropy_backward"> {
  let summary = "Cotangent of cross_entropy's logits";
  let description = [{
    `g` is the scalar cotangent of the loss. With `n` the number of labels
    not equal to `ignore_index`, `C` the class count, `e` the label
    smoothing: row i gets `g / n * (softmax(logits_i) - (1 - e) onehot(y_i)
    - e / C)`, and rows with an ignored label get 0 (PyTorch's mean
    reduction; n = 0 gives NaN like the forward). Computes in FP32
    whatever its operand types: logits, g and dlogits may each be f32, f16
    or bf16 (graph-absorb-casts removes the casts around it).

    ```mlir
    %dz = graph.cross_entropy_backward %z, %y, %g : tensor<64x10xf32>, tensor<64xi64>, tensor<f32> -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IntTensor:$labels,
      Graph_FloatTensor:$g,
      DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
      DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs Graph_FloatTensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $labels `,` $g attr-dict `:` type($logits) `,` type($labels)
    `,` type($g) `->` type($dlogits)
  }];
}

def Graph_CrossEntropyWithGradOp
    : Graph_GradOp<"cross_entropy_with_grad"> {
  let summary = "cross_entropy and its cotangent of the logits in one pass";
  let description = [{
    `loss` is cross_entropy's of `logits` and the class-index `labels`;
    `dlogits` is cross_entropy_backward's of the same operands and the
    scalar loss cotangent `g` (for the training loss, the loss scale the
    step is seeded with). graph-fuse-cross-entropy makes it where `g` is
    known when the forward runs, so the logits are read once: each row's
    log-sum-exp serves both results, and the memory plan may write
    `dlogits` over the logits when nothing reads them later. Same values
    as the two ops; not differentiable itself.

    ```mlir
    %l, %dz = graph.cross_entropy_with_grad %z, %y, %g : tensor<64x10xbf16>, tensor<64xi64>, tensor<f32> -> tensor<f32>, tensor<64x10xbf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IntTensor:$labels,
      Graph_FloatTensor:$g,
      DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
      DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs Graph_FloatTensor:$loss, Graph_FloatTensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $labels `,` $g attr-dict `:` type($logits) `,` type($labels)
    `,` type($g) `->` type($loss) `,` type($dlogits)
  }];
}

def Graph_SliceBackwardOp : Graph_GradOp<"slice_backward"> {
  let summary = "Cotangent of slice's input: g scattered back, zeros elsewhere";
  let description = [{
    The result type spells the sliced input's type; `starts`, `limits`,
    `strides` (default 1) and `perm` (g is the slice permuted: g's
    dimension i is slice dimension `perm[i]`) are those of the forward
    `graph.slice`.

    ```mlir
    %dx = graph.slice_backward %g {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>} : tensor<4x4xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$g, DenseI64ArrayAttr:$starts,
      DenseI64ArrayAttr:$limits, OptionalAttr<DenseI64ArrayAttr>:$strides,
      OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat = "$g attr-dict `:` type($g) `->` type($dx)";
}

def Graph_ReduceMaxBackwardOp : Graph_GradOp<"reduce_max_backward"> {
  let summary = "Cotangent of reduce_max's input";
  let description = [{
    `x` is the reduce input, `g` the cotangent of its result (shaped by
    `axes` and `keepdim` as the forward). Each reduced group's `g` is
    shared evenly among the elements equal to the group's maximum
    (torch.amax).

    ```mlir
    %dx = graph.reduce_max_backward %x, %g {axes = array<i64: 1>} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$g,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
      DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat =
      "$x `,` $g attr-dict `:` type($x) `,` type($g) `->` type($dx)";
}

def Graph_LayerNormBackwardOp : Graph_GradOp<"layer_norm_backward"> {
  let summary = "Cotangents of layer_norm's input, weight and bias";
  let description = [{
    `x: [..., D]` is the forward input, `weight: [D]` its weight (a ones
    constant when the forward has none), `g` the cotangent of its result.
    With xhat = (x - mean) * rstd over the last axis:
    `dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))` where
    `gw = g * weight`; `dweight = sum(g * xhat)` and `dbias = sum(g)` over
    all leading axes. Computes in FP32 whatever its operand types: x,
    weight, g and dx may each be f32, f16 or bf16 (graph-absorb-casts
    removes the casts around it); dweight and dbias have weight's type.

    ```mlir
    %dx, %dw, %db = graph.layer_norm_backward %x, %w, %g {eps = 1.0e-05} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$weight,
      Graph_FloatTensor:$g, DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Graph_FloatTensor:$dx, Graph_FloatTensor:$dweight,
                      Graph_FloatTensor:$dbias);
  let assemblyFormat = [{
    $x `,` $weight `,` $g attr-dict `:` type($x) `,` type($weight) `,` type($g)
    `->` type($dx) `,` type($dweight) `,` type($dbias)
  }];
}

def Graph_RmsNormBackwardOp : Graph_GradOp<"rms_norm_backward"> {
  let summary = "Cotangents of rms_norm's input and weight";
  let description = [{
    `x: [..., D]`, `weight: [D]` (ones when the forward has none), `g` the
    cotangent of the result. With r = rsqrt(mean(x^2) + eps) over the last
    axis: `dx = r * (gw - x * r^2 * mean(gw * x))` where `gw = g * weight`;
    `dweight = sum(g * x * r)` over all leading axes. Without `eps`, the
    machine epsilon of x's type, as rms_norm. Computes in FP32 whatever
    its operand types, as layer_norm_backward.

    ```mlir
    %dx, %dw = graph.rms_norm_backward %x, %w, %g {eps = 1.0e-06} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$weight,
      Graph_FloatTensor:$g, OptionalAttr<F64Attr>:$eps);
  let results = (outs Graph_FloatTensor:$dx, Graph_FloatTensor:$dweight);
  let assemblyFormat = [{
    $x `,` $weight `,` $g attr-dict `:` type($x) `,` type($weight) `,` type($g)
    `->` type($dx) `,` type($dweight)
  }];
}

def Graph_ScaledDotProductAttentionBackwardOp
    : Graph_GradOp<"scaled_dot_product_attention_backward"> {
  let summary = "Cotangents of scaled_dot_product_attention's q, k and v";
  let description = [{
    `q: [B, Hq, T, D]`, `k: [B, Hkv, S, D]`, `v: [B, Hkv, S, E]`, `g: [B,
    Hq, T, E]`; `causal`, `scale` (default 1/sqrt(D)) and the optional
    `mask` as in the forward (dk and dv sum over the query heads a kv head
    serves). With
    P = softmax(q k^T * scale [masked]): `dv = P^T g`, `dP = g v^T`,
    `dS = P * (dP - rowsum(dP * P))`, `dq = dS k * scale`,
    `dk = dS^T q * scale`.

    ```mlir
    %dq, %dk, %dv = graph.scaled_dot_product_attention_backward %q, %k, %v, %g {causal} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k,
      Graph_FloatTensor:$v, Graph_FloatTensor:$g,
      Optional<Graph_AnyTensor>:$mask, UnitAttr:$causal,
      OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$dq, Graph_FloatTensor:$dk,
                      Graph_FloatTensor:$dv);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g (`mask` $mask^)? attr-dict `:` type($q) `,`
    type($k) `,` type($v) `,` type($g) (`,` type($mask)^)? `->` type($dq)
    `,` type($dk) `,` type($dv)
  }];
}

def Graph_PackedAttentionBackwardOp
    : Graph_GradOp<"packed_attention_backward"> {
  let summary = "Cotangent of packed_attention's qkv";
  let description = [{
    `qkv: [B, T, 3E]`, `g: [B, T, E]` (the result's cotangent) ->
    `dqkv: [B, T, 3E]`: scaled_dot_product_attention_backward's dq, dk and
    dv, each seen as `[B, T, heads, D]`, written into the thirds of one
    packed gradient (where the unpacked graph concatenates them). `heads`,
    `causal` and `scale` as in the forward.

    ```mlir
    %dqkv = graph.packed_attention_backward %qkv, %g {heads = 4 : i64, causal} : tensor<2x16x96xf32>, tensor<2x16x32xf32> -> tensor<2x16x96xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, Graph_FloatTensor:$g,
      I64Attr:$heads, UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$dqkv);
  let assemblyFormat = [{
    $qkv `,` $g attr-dict `:` type($qkv) `,` type($g) `->` type($dqkv)
  }];
}

def Graph_ScaledDotProductAttentionStatsOp
    : Graph_GradOp<"scaled_dot_product_attention_stats"> {
  let summary = "scaled_dot_product_attention that also saves its softmax statistics";
  let description = [{
    `q: [B, Hq, T, D]`, `k: [B, Hkv, S, D]`, `v: [B, Hkv, S, E]` ->
    `result: [B, Hq, T, E]` (exactly scaled_dot_product_attention's without
    a mask or dropout) and `stats: [B, Hq, T]` f32, the log-sum-exp of each
    query row's scaled (and causally masked) scores, which flash attention's
    backward reads instead of running the forward again.
    graph-save-attention-stats makes it from an attention whose backward is
    in the same function; not differentiable itself.

    ```mlir
    %o, %stats = graph.scaled_dot_product_attention_stats %q, %k, %v {causal} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k,
      Graph_FloatTensor:$v, UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$result, Graph_FloatTensor:$stats);
  let assemblyFormat = [{
    $q `,` $k `,` $v attr-dict `:` type($q) `,` type($k) `,` type($v) `->`
    type($result) `,` type($stats)
  }];
}

def Graph_ScaledDotProductAttentionStatsBackwardOp
    : Graph_GradOp<"scaled_dot_product_attention_stats_backward"> {
  let summary = "scaled_dot_product_attention_backward from the forward's saved result";
  let description = [{
    scaled_dot_product_attention_backward's `dq`, `dk`, `dv` (no mask) with
    the forward's result `o: [B, Hq, T, E]` and `stats: [B, Hq, T]`
    (scaled_dot_product_attention_stats) as extra operands, so that a flash
    backward reads them instead of recomputing them. The values are the
    backward's whatever the kernel reads (the CPU library and the
    interpreter ignore o and stats).

    ```mlir
    %dq, %dk, %dv = graph.scaled_dot_product_attention_stats_backward %q, %k, %v, %o, %stats, %g {causal} : tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x16x8xbf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k,
      Graph_FloatTensor:$v, Graph_FloatTensor:$o, Graph_FloatTensor:$stats,
      Graph_FloatTensor:$g, UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$dq, Graph_FloatTensor:$dk,
                      Graph_FloatTensor:$dv);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $o `,` $stats `,` $g attr-dict `:` type($q) `,`
    type($k) `,` type($v) `,` type($o) `,` type($stats) `,` type($g) `->`
    type($dq) `,` type($dk) `,` type($dv)
  }];
}

def Graph_PackedAttentionStatsOp
    : Graph_GradOp<"packed_attention_stats"> {
  let summary = "packed_attention that also saves its softmax statistics";
  let description = [{
    `qkv: [B, T, 3E]` -> `result: [B, T, E]` (exactly packed_attention's)
    and `stats: [B, heads, T]` f32, the log-sum-exp of each query row's
    scaled (and masked) scores, the statistics flash attention's backward
    reads instead of running the forward again (cuDNN's SDPA with
    generate_stats). graph-save-attention-stats makes it from a
    packed_attention whose backward is in the same function; not
    differentiable itself.

    ```mlir
    %o, %stats = graph.packed_attention_stats %qkv {heads = 4 : i64, causal} : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>, tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, I64Attr:$heads,
      UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$result, Graph_FloatTensor:$stats);
  let assemblyFormat = [{
    $qkv attr-dict `:` type($qkv) `->` type($result) `,` type($stats)
  }];
}

def Graph_PackedAttentionStatsBackwardOp
    : Graph_GradOp<"packed_attention_stats_backward"> {
  let summary = "packed_attention_backward from the forward's saved result";
  let description = [{
    packed_attention_backward's `dqkv` with the forward's result `o: [B, T,
    E]` and `stats: [B, heads, T]` (packed_attention_stats) as extra
    operands, so that a flash backward reads them instead of recomputing
    them. The value is packed_attention_backward's whatever the kernel reads
    (the CPU library and the interpreter ignore o and stats).

    ```mlir
    %dqkv = graph.packed_attention_stats_backward %qkv, %o, %stats, %g {heads = 4 : i64, causal} : tensor<2x16x96xbf16>, tensor<2x16x32xbf16>, tensor<2x4x16xf32>, tensor<2x16x32xbf16> -> tensor<2x16x96xbf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, Graph_FloatTensor:$o,
      Graph_FloatTensor:$stats, Graph_FloatTensor:$g, I64Attr:$heads,
      UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$dqkv);
  let assemblyFormat = [{
    $qkv `,` $o `,` $stats `,` $g attr-dict `:` type($qkv) `,` type($o) `,`
    type($stats) `,` type($g) `->` type($dqkv)
  }];
}

def Graph_BatchNormBackwardOp : Graph_GradOp<"batch_norm_backward"> {
  let summary = "Cotangents of batch_norm's input, weight and bias";
  let description = [{
    `x: [N, C, ...]` is the forward input, `weight: [C]` its weight, `g` the
    cotangent of its result; the statistics are the batch's (training). With
    xhat = (x - mean) * rstd per channel over the n = N*H*W elements:
    `dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))` where
    `gw = g * weight`; `dweight = sum(g * xhat)` and `dbias = sum(g)` per
    channel.

    ```mlir
    %dx, %dw, %db = graph.batch_norm_backward %x, %w, %g {eps = 1.0e-05} : tensor<8x4xf32>, tensor<4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$weight,
      Graph_FloatTensor:$g, DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Graph_FloatTensor:$dx, Graph_FloatTensor:$dweight,
                      Graph_FloatTensor:$dbias);
  let assemblyFormat = [{
    $x `,` $weight `,` $g attr-dict `:` type($x) `,` type($weight) `,` type($g)
    `->` type($dx) `,` type($dweight) `,` type($dbias)
  }];
}

def Graph_GroupNormBackwardOp : Graph_GradOp<"group_norm_backward"> {
  let summary = "Cotangents of group_norm's input, weight and bias";
  let description = [{
    `x: [N, C, *]` is the forward input, `weight: [C]` its weight, `g` the
    cotangent of its result. Per (sample, group) of m elements, with
    xhat = (x - mean) * rstd and `gw = g * weight`:
    `dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))`;
    `dweight = sum(g * xhat)` and `dbias = sum(g)` per channel.

    ```mlir
    %dx, %dw, %db = graph.group_norm_backward %x, %w, %g {num_groups = 2} : tensor<8x4x3xf32>, tensor<4xf32>, tensor<8x4x3xf32> -> tensor<8x4x3xf32>, tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$weight,
      Graph_FloatTensor:$g, I64Attr:$num_groups,
      DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Graph_FloatTensor:$dx, Graph_FloatTensor:$dweight,
                      Graph_FloatTensor:$dbias);
  let assemblyFormat = [{
    $x `,` $weight `,` $g attr-dict `:` type($x) `,` type($weight) `,` type($g)
    `->` type($dx) `,` type($dweight) `,` type($dbias)
  }];
}

def Graph_NllLossBackwardOp : Graph_GradOp<"nll_loss_backward"> {
  let summary = "Cotangent of nll_loss's input: -g scattered to the labels";
  let description = [{
    The result type spells the input's type `[..., C]`. `g` is the loss
    cotangent: a scalar for reduction "mean" and "sum", the labels' shape
    for "none". Row i gets `-g_i` (divided by the number of counted rows for
    "mean") at column `labels[i]` and 0 elsewhere; ignored rows get 0.

    ```mlir
    %dx = graph.nll_loss_backward %y, %g : tensor<64xi64>, tensor<f32> -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$labels, Graph_FloatTensor:$g,
      DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
      DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
  let results = (outs Graph_FloatTensor:$dinput);
  let assemblyFormat = [{
    $labels `,` $g attr-dict `:` type($labels) `,` type($g) `->` type($dinput)
  }];
}

def Graph_GatherBackwardOp : Graph_GradOp<"gather_backward"> {
  let summary = "Cotangent of gather's input: scatter-add of g by index";
  let description = [{
    The result type spells the input's type; `g` has the index's shape.
    `dinput[..index[i][j]..] += g[i][j]` along `axis` (FP32 sums; in index
    order on the CPU, atomics on CUDA), zeros where nothing was gathered.

    ```mlir
    %dx = graph.gather_backward %i, %g {axis = 1 : i64} : tensor<4x3xi64>, tensor<4x3xf32> -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$index, Graph_FloatTensor:$g,
      I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$dinput);
  let assemblyFormat = [{
    $index `,` $g attr-dict `:` type($index) `,` type($g) `->` type($dinput)
  }];
}

def Graph_AdaptiveAvgPool2dBackwardOp : Graph_GradOp<"adaptive_avg_pool2d_backward"> {
  let summary = "Cotangent of adaptive_avg_pool2d's input";
  let description = [{
    Each output's `g` divided by its window's size goes to every input
    position of the window (windows as in the forward op, read off the
    shapes of `g` and of the result, which spells the input's type);
    overlaps add up.

    ```mlir
    %dx = graph.adaptive_avg_pool2d_backward %g : tensor<8x64x1x1xf32> -> tensor<8x64x7x7xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$g);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat = "$g attr-dict `:` type($g) `->` type($dx)";
}

def Graph_UpsampleNearest2dBackwardOp : Graph_GradOp<"upsample_nearest2d_backward"> {
  let summary = "Cotangent of upsample_nearest2d's input";
  let description = [{
    Each input position gets the sum of the `g` of every output that read
    it. Attributes as in `graph.upsample_nearest2d`; the result type
    spells the input's type.

    ```mlir
    %dx = graph.upsample_nearest2d_backward %g {scales_h = 2.0, scales_w = 2.0} : tensor<8x16x14x14xf32> -> tensor<8x16x7x7xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$g,
      OptionalAttr<DenseI64ArrayAttr>:$size,
      OptionalAttr<F64Attr>:$scales_h,
      OptionalAttr<F64Attr>:$scales_w);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat = "$g attr-dict `:` type($g) `->` type($dx)";
}

def Graph_UpsampleBilinear2dBackwardOp : Graph_GradOp<"upsample_bilinear2d_backward"> {
  let summary = "Cotangent of upsample_bilinear2d's input";
  let description = [{
    Each input position gets the sum of `weight * g` over the outputs that
    read it, in output order (row-major, then the four taps r0c0, r0c1,
    r1c0, r1c1), with the forward's weights h * w. Attributes as in
    `graph.upsample_bilinear2d`; the result type spells the input's type.

    ```mlir
    %dx = graph.upsample_bilinear2d_backward %g {scales_h = 2.0, scales_w = 2.0} : tensor<8x16x14x14xf32> -> tensor<8x16x7x7xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$g,
      OptionalAttr<DenseI64ArrayAttr>:$size,
      OptionalAttr<F64Attr>:$scales_h,
      OptionalAttr<F64Attr>:$scales_w,
      DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Graph_FloatTensor:$dx);
  let assemblyFormat = "$g attr-dict `:` type($g) `->` type($dx)";
}

def Graph_MatmulBiasGradOp : Graph_GradOp<"matmul_bias_grad"> {
  let summary = "A weight-gradient GEMM and the sum of its lhs over K (dW, db)";
  let description = [{
    `graph.matmul %lhs, %rhs` (2-D, the same `lhs_transposed` /
    `rhs_transposed` flags) and, as a second result, the sum of the lhs
    over the GEMM's reduction dimension K: with `lhs_transposed` the lhs is
    `[K, M]` and `bias_grad[m] = sum_k lhs[k, m]`, otherwise it is `[M, K]`
    and `bias_grad[m] = sum_k lhs[m, k]`. Exactly the `graph.reduce_sum` it
    replaces: FP32 accumulation in the lhs's row-major order, one rounding
    to the result type (`bias_grad` has the lhs's element type). For a
    linear layer's backward (`dW = dY^T X`, `db = sum(dY)` over the rows)
    `graph-fuse-bias-grad` writes it from a matmul and a reduce_sum of the
    same output gradient; cuBLASLt computes both in one call (the BGRADB
    epilogue), the CPU library and the interpreter as the GEMM and the sum.

    ```mlir
    %dw, %db = graph.matmul_bias_grad %dy, %x {lhs_transposed} : tensor<64x256xbf16>, tensor<64x784xbf16> -> tensor<256x784xbf16>, tensor<256xbf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
      UnitAttr:$lhs_transposed, UnitAttr:$rhs_transposed);
  let results = (outs Graph_FloatTensor:$result, Graph_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
    `,` type($bias_grad)
  }];
}

def Graph_LinearGeluOp : Graph_GradOp<"linear_gelu"> {
  let summary = "A linear and the tanh GELU of its result in one GEMM (opt-in)";
  let description = [{
    `graph.linear %input, %weight (, %bias)` followed by
    `graph.gelu {approximate = "tanh"}`, computed the way cuBLASLt's
    GELU_AUX_BIAS epilogue does: `z = x W^T + b` in FP32 (the linear's
    accumulator plus the bias), `preactivation = z` rounded to the result
    type (bitwise graph.linear's result) and `result = gelu_tanh(z)` rounded
    once. linear then gelu round twice (z, then the GELU of the rounded z),
    as PyTorch eager does, so for f16/bf16 the result can differ from theirs
    in the last bit; for f32 it is the same. `graph-fuse-gemm-gelu`
    (`--fuse-gemm-gelu`, off by default) writes it; the preactivation is
    what the GELU's backward reads.

    ```mlir
    %h, %z = graph.linear_gelu %x, %w, %b : tensor<64x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<64x256xbf16>, tensor<64x256xbf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Optional<Graph_FloatTensor>:$bias);
  let results = (outs Graph_FloatTensor:$result,
                      Graph_FloatTensor:$preactivation);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result) `,` type($preactivation)
  }];
}

def Graph_MatmulGeluBackwardOp : Graph_GradOp<"matmul_gelu_backward"> {
  let summary = "A GEMM giving a tanh GELU's output gradient, and the GELU's backward on it (opt-in)";
  let description = [{
    `graph.gelu_backward {approximate = "tanh"} %preactivation, G` where
    `G = graph.matmul %lhs, %rhs` (2-D, the same `lhs_transposed` /
    `rhs_transposed` flags), computed the way cuBLASLt's DGELU epilogue
    does: the GELU's derivative at the preactivation times the GEMM's FP32
    accumulator, rounded once. matmul then gelu_backward round G first (as
    PyTorch eager does), so for f16/bf16 the result can differ from theirs
    in the last bit; for f32 it is the same. `preactivation` is `[M, N]`
    like the result; all operands and the result share one element type.
    `graph-fuse-gemm-gelu` writes it.

    ```mlir
    %dz = graph.matmul_gelu_backward %dh, %w, %z : tensor<64x64xbf16>, tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
      Graph_FloatTensor:$preactivation, UnitAttr:$lhs_transposed,
      UnitAttr:$rhs_transposed);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $preactivation attr-dict `:` type($lhs) `,` type($rhs)
    `,` type($preactivation) `->` type($result)
  }];
}

#endif // AMPC_GRAPH_GRAD_OPS
