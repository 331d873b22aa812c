//===- GraphOps.td - Graph dialect ops ---------------------------*- td -*-===//
//
// Structure ops (model, input, param, output) and the compute ops of model
// files. Compute ops infer their result type; formats that spell it out make
// the precision of every value visible in IR dumps, and the verifier checks
// the spelled type against the inferred one.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_GRAPH_OPS
#define AMPC_GRAPH_OPS

include "dialects/Graph/GraphBase.td"
include "dialects/Graph/GraphAttrs.td"
include "dialects/Graph/GraphInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Graph_ModelOp : Graph_Op<"model", [
    IsolatedFromAbove, Symbol, SingleBlockImplicitTerminator<"OutputOp">]> {
  let summary = "A model: inputs, parameters, computation and loss";
  let description = [{
    Holds one block: `graph.input` and `graph.param` ops, the computation and
    a `graph.output` terminator naming the loss. Input and parameter names are
    unique within a model.

    ```mlir
    graph.model @regression {
      %x = graph.input "x" : tensor<8x4xf32>
      %y = graph.input "y" : tensor<8x1xf32>
      %w = graph.param "w" init(#graph.normal<std = 0.02>) : tensor<1x4xf32>
      %p = graph.linear %x, %w : tensor<8x4xf32>, tensor<1x4xf32> -> tensor<8x1xf32>
      %l = graph.mse_loss %p, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
      graph.output loss = %l : tensor<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBlock() { return getBody().front(); }
    OutputOp getOutputOp();
  }];
}

// graph.input and graph.param declare the model's interface: they are not
// Pure, so CSE and other dead-code elimination keep them when nothing reads
// them (an unused parameter still has a gradient, zero, and optimizer state;
// an unused input still takes its --data).
def Graph_InputOp : Graph_Op<"input", [HasParent<"ModelOp">]> {
  let summary = "A named data input of the model";
  let description = [{
    Data fed per step (images, labels, token ids), bound by name at run time.
    Input names are printable (no control characters, valid UTF-8) and hold
    no `,` or `=` (the binary binds them with `--data NAME=PATH,...`).

    ```mlir
    %image = graph.input "image" : tensor<64x784xf32>
    %label = graph.input "label" : tensor<64xi64>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Graph_ParamOp : Graph_Op<"param", [HasParent<"ModelOp">]> {
  let summary = "A named trainable parameter and its initializer";
  let description = [{
    Parameters are FP32 master weights; `init` is one of the `#graph.*`
    initializers (zeros, ones, constant, normal, uniform, xavier_uniform,
    xavier_normal, kaiming_uniform, kaiming_normal, trunc_normal).

    ```mlir
    %w = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<256x784xf32>
    %b = graph.param "fc1.bias" init(#graph.zeros) : tensor<256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, AnyAttr:$init);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$name `init` `(` $init `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_OutputOp : Graph_Op<"output", [HasParent<"ModelOp">, Terminator, Pure]> {
  let summary = "Names the model's loss and its other outputs";
  let description = [{
    Exactly one output is named `loss` and is a scalar float tensor; the
    others (logits, say) are returned for evaluation.

    ```mlir
    graph.output loss = %l : tensor<f32>, logits = %z : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_AnyTensor>:$values, StrArrayAttr:$names);
  let builders = [OpBuilder<(ins), [{
    $_state.addAttribute("names", $_builder.getStrArrayAttr({}));
  }]>];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    // The loss value, or null when no output is named "loss".
    ::mlir::Value getLoss();
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_ComputeOp<"matmul", [Graph_VJP]> {
  let summary = "Matrix product (torch.matmul for operands of rank >= 2)";
  let description = [{
    `[M, K] x [K, N] -> [M, N]`; operands share an element type. Under AMP
    it runs in half precision with FP32 accumulation. Operands of higher
    rank are batches whose leading dimensions broadcast as in numpy
    (`[..., M, K] x [..., K, N] -> [..., M, N]`, as graph.batch_matmul);
    the gradients sum over the broadcast dimensions.

    ```mlir
    %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %d = graph.matmul %x, %b : tensor<2x3x4x8xf32>, tensor<8x16xf32> -> tensor<2x3x4x16xf32>
    ```

    `lhs_transposed` / `rhs_transposed` (unit attributes) make the operand
    the transpose of its last two axes, as the GEMM's transpose flag: with
    `lhs_transposed` the lhs is `[..., K, M]`, with `rhs_transposed` the
    rhs is `[..., N, K]`. `graph-fold-gemm-transpose` sets them where an
    operand was a graph.transpose of its last two axes.

    ```mlir
    %e = graph.matmul %at, %b {lhs_transposed} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
      UnitAttr:$lhs_transposed, UnitAttr:$rhs_transposed);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Graph_BatchMatmulOp : Graph_ComputeOp<"batch_matmul", [Graph_VJP]> {
  let summary = "Batched matrix product";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`; the leading batch
    dimensions broadcast as in numpy (torch.matmul): a missing or size-1
    dimension repeats. The gradients sum over the broadcast dimensions
    (`graph-desugar` makes the broadcast an explicit graph.broadcast_to).

    ```mlir
    %c = graph.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
    %d = graph.batch_matmul %x, %y : tensor<2x1x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x3x4x5xf32>
    ```

    `lhs_transposed` / `rhs_transposed` as on graph.matmul: the operand is
    the transpose of its last two axes (`[..., K, M]`, `[..., N, K]`).
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
      UnitAttr:$lhs_transposed, UnitAttr:$rhs_transposed);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Graph_LinearOp : Graph_ComputeOp<"linear", [Graph_VJP]> {
  let summary = "Affine map x * W^T + b (torch.nn.functional.linear)";
  let description = [{
    `x: [..., K]`, `weight: [N, K]`, optional `bias: [N]` -> `[..., N]`.

    ```mlir
    %y = graph.linear %x, %w, %b : tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32> -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Optional<Graph_FloatTensor>:$bias);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
}

def Graph_Conv2dOp : Graph_ComputeOp<"conv2d", [Graph_VJP]> {
  let summary = "2-D convolution, NCHW (torch.nn.functional.conv2d)";
  let description = [{
    `input: [N, C, H, W]`, `weight: [O, C/groups, KH, KW]`, optional
    `bias: [O]`. `stride`, `padding` and `dilation` are [h, w] pairs
    (defaults 1, 0, 1); `groups` divides C and O.

    ```mlir
    %y = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1>} : tensor<8x1x28x28xf32>, tensor<16x1x3x3xf32>, tensor<16xf32> -> tensor<8x16x28x28xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
      Optional<Graph_FloatTensor>:$bias,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
}

class Graph_Pool2dOp<string mnemonic, string what>
    : Graph_ComputeOp<mnemonic, [Graph_VJP]> {
  let summary = what # " pooling over H and W, NCHW";
  let arguments = (ins Graph_FloatTensor:$input,
      DenseI64ArrayAttr:$kernel_size,
      OptionalAttr<DenseI64ArrayAttr>:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    // The stride, which defaults to the kernel size as in PyTorch.
    ::llvm::SmallVector<int64_t, 2> getStrideOrDefault() {
      if (auto s = getStride()) return ::llvm::SmallVector<int64_t, 2>(*s);
      return ::llvm::SmallVector<int64_t, 2>(getKernelSize());
    }
  }];
}

def Graph_MaxPool2dOp : Graph_Pool2dOp<"max_pool2d", "Max"> {
  let description = [{
    `kernel_size`, `stride` (default: kernel_size) and `padding` are [h, w];
    padded positions never win.

    ```mlir
    %y = graph.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<8x16x28x28xf32> -> tensor<8x16x14x14xf32>
    ```
  }];
}

def Graph_AvgPool2dOp : Graph_Pool2dOp<"avg_pool2d", "Average"> {
  let description = [{
    Like `max_pool2d`; padded zeros count in the divisor
    (PyTorch's count_include_pad=True).

    ```mlir
    %y = graph.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<8x16x28x28xf32> -> tensor<8x16x14x14xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, string what>
    : Graph_ComputeOp<mnemonic, [Graph_VJP]> {
  let summary = what # " with numpy broadcasting";
  let description = [{
    Operands share an element type (AMP inserts the casts that promote);
    shapes broadcast as in numpy.

    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Graph_AddOp : Graph_BinaryOp<"add", "Elementwise sum">;
def Graph_SubOp : Graph_BinaryOp<"sub", "Elementwise difference">;
def Graph_MulOp : Graph_BinaryOp<"mul", "Elementwise product">;
def Graph_DivOp : Graph_BinaryOp<"div", "Elementwise quotient">;
// torch.maximum / torch.minimum: NaN propagates; tied elements share the
// cotangent equally.
def Graph_MaximumOp : Graph_BinaryOp<"maximum", "Elementwise maximum">;
def Graph_MinimumOp : Graph_BinaryOp<"minimum", "Elementwise minimum">;

def Graph_WhereOp : Graph_ComputeOp<"where", [Graph_VJP]> {
  let summary = "Select x where the condition is nonzero, else y";
  let description = [{
    torch.where(condition, x, y) with an integer condition (nonzero is
    true; i32 or i64, e.g. a mask read from a data file). The three shapes
    broadcast as in numpy; x and y share an element type (AMP promotes them
    like add). The cotangent goes to x where the condition holds and to y
    elsewhere.

    ```mlir
    %z = graph.where %mask, %x, %y : tensor<4x1xi64>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$condition, Graph_FloatTensor:$x,
                       Graph_FloatTensor:$y);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $condition `,` $x `,` $y attr-dict `:` type($condition) `,` type($x) `,` type($y) `->` type($result)
  }];
}

def Graph_MaskedFillOp : Graph_ComputeOp<"masked_fill", [Graph_VJP]> {
  let summary = "Replace elements where the mask is nonzero by a constant";
  let description = [{
    Tensor.masked_fill(mask, value): the integer mask (nonzero is true; i32
    or i64) broadcasts to the input's shape; the result has the input's
    type, `value` rounded to it. The cotangent passes where the mask is 0.

    ```mlir
    %y = graph.masked_fill %x, %mask {value = -1.0e4} : tensor<2x4x4xf32>, tensor<4x4xi64> -> tensor<2x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IntTensor:$mask,
                       F64Attr:$value);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mask attr-dict `:` type($input) `,` type($mask) `->` type($result)
  }];
}

class Graph_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Graph_SameTypeOp<mnemonic, !listconcat(traits, [Graph_VJP])> {
  let summary = what;
  let description = [{
    Elementwise; the result has the operand's type.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_NegOp : Graph_UnaryOp<"neg", "Negation">;
def Graph_ReluOp : Graph_UnaryOp<"relu", "max(x, 0)">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "Hyperbolic tangent">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Graph_ExpOp : Graph_UnaryOp<"exp", "Exponential">;
def Graph_LogOp : Graph_UnaryOp<"log", "Natural logarithm">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "Square root">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Graph_SiluOp : Graph_UnaryOp<"silu", "x * sigmoid(x) (swish)">;
def Graph_AbsOp : Graph_UnaryOp<"abs", "Absolute value">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "Gauss error function">;
def Graph_SinOp : Graph_UnaryOp<"sin", "Sine">;
def Graph_CosOp : Graph_UnaryOp<"cos", "Cosine">;
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", "1 / x">;

def Graph_LeakyReluOp : Graph_SameTypeOp<"leaky_relu", [Graph_VJP]> {
  let summary = "x where x > 0, else negative_slope * x";
  let description = [{
    `negative_slope` defaults to 0.01 (torch.nn.LeakyReLU).

    ```mlir
    %y = graph.leaky_relu %x {negative_slope = 0.2} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "0.01">:$negative_slope);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_EluOp : Graph_SameTypeOp<"elu", [Graph_VJP]> {
  let summary = "scale * x where x > 0, else scale * alpha * (exp(input_scale * x) - 1)";
  let description = [{
    aten's elu, which is also torch.nn.SELU (alpha 1.6732632423543772,
    scale 1.0507009873554805) and torch.nn.CELU (input_scale 1 / alpha).
    All three default to 1 (torch.nn.ELU). Computed as PyTorch's CUDA
    kernel: expm1(x * input_scale) * (alpha * scale), the coefficients in
    float (its CPU kernel takes exp(...) - 1, a few ulps apart near 0).

    ```mlir
    %y = graph.elu %x {alpha = 0.5} : tensor<4x8xf32>
    %s = graph.elu %x {alpha = 1.6732632423543772, scale = 1.0507009873554805} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       DefaultValuedAttr<F64Attr, "1.0">:$input_scale);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_SoftplusOp : Graph_SameTypeOp<"softplus", [Graph_VJP]> {
  let summary = "log(1 + exp(beta x)) / beta";
  let description = [{
    As torch.nn.functional.softplus: where beta * x > `threshold` the result
    is x itself. `beta` (default 1, nonzero) and `threshold` (default 20).

    ```mlir
    %y = graph.softplus %x {beta = 2.0, threshold = 10.0} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<F64Attr, "20.0">:$threshold);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_ClampOp : Graph_SameTypeOp<"clamp", [Graph_VJP]> {
  let summary = "Clamp to [min, max]";
  let description = [{
    min(max(x, `min`), `max`) as torch.clamp: either bound may be left out
    (not both); NaN stays NaN; with min > max every element becomes max.
    The cotangent passes where min <= x <= max.

    ```mlir
    %y = graph.clamp %x {min = -1.0, max = 1.0} : tensor<4x8xf32>
    %z = graph.clamp %x {min = 0.0} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_GeluOp : Graph_SameTypeOp<"gelu", [Graph_VJP]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate` is "none" (exact, x * Phi(x)) or "tanh"
    (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), as in PyTorch.

    ```mlir
    %y = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_PowOp : Graph_SameTypeOp<"pow", [Graph_VJP]> {
  let summary = "x raised to a constant exponent";
  let description = [{
    ```mlir
    %y = graph.pow %x {exponent = 2.0} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$exponent);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_DropoutOp : Graph_SameTypeOp<"dropout", [Graph_VJP]> {
  let summary = "Inverted dropout with probability p (training mode)";
  let description = [{
    Zeroes each element with probability `p` and scales the rest by
    1/(1-p). The mask of element i is a function of (seed, step, `key`, i)
    only (a counter-based RNG), so it is reproducible and the backward,
    a dropout of the cotangent with the same `p` and `key`, reuses it.
    `graph-autodiff` gives every dropout without a `key` a unique one.

    ```mlir
    %y = graph.dropout %x {p = 0.1, key = 3} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$p,
                       OptionalAttr<I64Attr>:$key);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure, Graph_VJP]> {
  let summary = "Convert a float tensor to f32, f16 or bf16";
  let description = [{
    Rounds to nearest even; values beyond the target's range become inf.
    The result type spells the target element type; shapes are equal.

    ```mlir
    %h = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

class Graph_SoftmaxLikeOp<string mnemonic, string what>
    : Graph_SameTypeOp<mnemonic, [Graph_VJP]> {
  let summary = what # " along an axis";
  let description = [{
    `axis` may be negative (counted from the end). Computed in FP32 under
    AMP.

    ```mlir
    %p = graph.}] # mnemonic # [{ %x {axis = -1} : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_SoftmaxOp : Graph_SoftmaxLikeOp<"softmax", "Softmax">;
def Graph_LogSoftmaxOp : Graph_SoftmaxLikeOp<"log_softmax", "Log-softmax">;

def Graph_LayerNormOp : Graph_FP32ComputeOp<"layer_norm", [AttrSizedOperandSegments, Graph_VJP]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + eps) * weight + bias` over the last axis, with
    the biased variance (PyTorch). `weight` and `bias` are optional `[D]`.
    Computes in FP32 whatever its operand types: the input, weight, bias
    and result may each be f32, f16 or bf16 (graph-absorb-casts removes
    the casts around it; the result is rounded once from FP32).

    ```mlir
    %y = graph.layer_norm %x, %g, %b {eps = 1.0e-05} : tensor<4x8x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<4x8x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      Optional<Graph_FloatTensor>:$weight, Optional<Graph_FloatTensor>:$bias,
      DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? (`,` $bias^)? attr-dict `:` type($input)
    (`,` type($weight)^)? (`,` type($bias)^)? `->` type($result)
  }];
}

def Graph_RmsNormOp : Graph_FP32ComputeOp<"rms_norm", [Graph_VJP]> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `x / sqrt(mean(x^2) + eps) * weight`; `weight` is optional `[D]`.
    Without `eps`, eps is the machine epsilon of the type the op runs in
    (torch.nn.RMSNorm's `torch.finfo(x.dtype).eps`: 2^-23 for f32, 2^-10 for
    f16, 2^-7 for bf16), so it follows autocast's decision. Computes in
    FP32 whatever its operand types: the input, weight and result may each
    be f32, f16 or bf16 (graph-absorb-casts removes the casts around it and
    then spells eps out, so eps stays that of the type it ran in).

    ```mlir
    %y = graph.rms_norm %x, %g {eps = 1.0e-06} : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      Optional<Graph_FloatTensor>:$weight,
      OptionalAttr<F64Attr>:$eps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? attr-dict `:` type($input)
    (`,` type($weight)^)? `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Indexing and shape
//===----------------------------------------------------------------------===//

def Graph_EmbeddingOp : Graph_ComputeOp<"embedding", [Graph_VJP]> {
  let summary = "Rows of a table selected by integer ids";
  let description = [{
    `ids: [...] (i32/i64)`, `table: [V, D]` -> `[..., D]`.

    ```mlir
    %e = graph.embedding %ids, %wte : tensor<4x16xi64>, tensor<256x32xf32> -> tensor<4x16x32xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$ids, Graph_FloatTensor:$table);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$ids `,` $table attr-dict `:` type($ids) `,` type($table) `->` type($result)";
}

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure, Graph_VJP]> {
  let summary = "Same elements, new shape";
  let description = [{
    The result type gives the shape; element counts and types must match.

    ```mlir
    %y = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_ComputeOp<"transpose", [Graph_VJP]> {
  let summary = "Permute dimensions (torch.permute)";
  let description = [{
    Result dimension i is input dimension `perm[i]`.

    ```mlir
    %y = graph.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_SliceOp : Graph_ComputeOp<"slice", [Graph_VJP]> {
  let summary = "Strided slice";
  let description = [{
    Per dimension: elements `start, start+stride, ...` below `limit`.
    `strides` defaults to 1. The optional `perm` permutes the slice as
    graph.transpose does (result dimension i is slice dimension `perm[i]`),
    so slice, reshape and transpose chains are one strided copy
    (`graph-collapse-data-movement` writes it).

    ```mlir
    %y = graph.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>} : tensor<4x8xf32> -> tensor<4x4xf32>
    %z = graph.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>, perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input, DenseI64ArrayAttr:$starts,
      DenseI64ArrayAttr:$limits, OptionalAttr<DenseI64ArrayAttr>:$strides,
      OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_ConcatOp : Graph_ComputeOp<"concat", [Graph_VJP]> {
  let summary = "Join tensors along an axis";
  let description = [{
    The optional `perm` transposes every input first, as graph.transpose
    does (dimension i of the transposed input is the input's dimension
    `perm[i]`); `axis` and the result are in the transposed order. So a
    sum of slice_backward results that tile the result along one axis is
    one copy (`graph-collapse-data-movement` writes it).

    ```mlir
    %y = graph.concat %a, %b {axis = 1} : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x5xf32>
    %z = graph.concat %a, %b {axis = 0, perm = array<i64: 1, 0>} : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<5x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_AnyTensor>:$inputs, I64Attr:$axis,
      OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
}

class Graph_ReduceOp<string mnemonic, string what>
    : Graph_ComputeOp<mnemonic, [Graph_VJP]> {
  let summary = what # " over axes";
  let description = [{
    `axes` (may be negative; all axes when empty), `keepdim` keeps reduced
    dimensions as size 1. Sums accumulate in FP32 whatever the type.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
      DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "Sum">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "Mean">;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "Maximum">;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Graph_CrossEntropyOp : Graph_FP32ComputeOp<"cross_entropy", [Graph_VJP]> {
  let summary = "Softmax cross entropy with class-index or probability labels, mean reduction";
  let description = [{
    `logits: [..., C]` (classes on the last axis), `labels: [...]` integer
    class ids. Labels equal to `ignore_index` (default -100) contribute
    nothing and are not counted in the mean; `label_smoothing` (default 0)
    mixes in the uniform distribution as in PyTorch. Result: a scalar.

    Labels may instead be class probabilities: a float tensor of the
    logits' type. Each row's loss is `-sum_c t_c log_softmax(z)_c` (with
    smoothing `t = (1 - e) t + e / C`), averaged over all rows
    (`ignore_index` does not apply), as PyTorch.

    Computes in FP32 whatever its operand types: with class-index labels,
    the logits and the result may each be f32, f16 or bf16
    (graph-absorb-casts removes the casts around it).

    ```mlir
    %l = graph.cross_entropy %z, %y : tensor<64x10xf32>, tensor<64xi64> -> tensor<f32>
    %s = graph.cross_entropy %z, %p {label_smoothing = 0.1} : tensor<64x10xf32>, tensor<64x10xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_AnyTensor:$labels,
      DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
      DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($result)
  }];
}

def Graph_MseLossOp : Graph_ComputeOp<"mse_loss", [Graph_VJP]> {
  let summary = "Mean squared error, mean reduction";
  let description = [{
    ```mlir
    %l = graph.mse_loss %p, %t : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$target);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` type($input) `,` type($target) `->` type($result)
  }];
}

// l1_loss, smooth_l1_loss and huber_loss: input and target share a shape
// and element type; `reduction` is "mean" (default), "sum" or "none" (the
// per-element losses, the input's shape), as in torch.nn.functional.
class Graph_RegressionLossOp<string mnemonic, dag params, string what,
                             string example>
    : Graph_ComputeOp<mnemonic, [Graph_VJP]> {
  let summary = what;
  let description = [{
    `reduction` is "mean" (default), "sum" or "none" (per-element losses,
    the input's shape), as in torch.nn.functional.

    ```mlir
    }] # example # [{

    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input,
                            Graph_FloatTensor:$target,
                            DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction),
                       params);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` type($input) `,` type($target) `->` type($result)
  }];
}

def Graph_L1LossOp : Graph_RegressionLossOp<"l1_loss", (ins),
    "Mean absolute error |input - target|",
    "%l = graph.l1_loss %p, %t : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>">;

def Graph_SmoothL1LossOp : Graph_RegressionLossOp<"smooth_l1_loss",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$beta),
    "0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)",
    "%l = graph.smooth_l1_loss %p, %t {beta = 0.5, reduction = \"sum\"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>">;

def Graph_HuberLossOp : Graph_RegressionLossOp<"huber_loss",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$delta),
    "0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target)",
    "%l = graph.huber_loss %p, %t {delta = 2.0, reduction = \"none\"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>">;

def Graph_NllLossOp : Graph_ComputeOp<"nll_loss", [Graph_VJP]> {
  let summary = "Negative log-likelihood of class-index labels";
  let description = [{
    `input: [..., C]` holds log-probabilities (classes on the last axis, as
    graph.cross_entropy; for `[N, C]` this is torch.nn.functional.nll_loss),
    `labels: [...]` integer class ids. Each row's loss is `-input[y]`; rows
    whose label equals `ignore_index` (default -100) give 0 and are not
    counted. `reduction` "mean" (default) divides the sum by the number of
    counted rows (NaN when every row is ignored, as PyTorch), "sum" sums,
    "none" returns the per-row losses (the labels' shape).

    ```mlir
    %lp = graph.log_softmax %z {axis = -1 : i64} : tensor<64x10xf32>
    %l = graph.nll_loss %lp, %y : tensor<64x10xf32>, tensor<64xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IntTensor:$labels,
      DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
      DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $labels attr-dict `:` type($input) `,` type($labels) `->` type($result)
  }];
}

def Graph_BinaryCrossEntropyWithLogitsOp
    : Graph_ComputeOp<"binary_cross_entropy_with_logits", [Graph_VJP]> {
  let summary = "Sigmoid + binary cross entropy, in the stable form of PyTorch";
  let description = [{
    `input` (logits) and `target` share a shape; the optional `pos_weight`
    weighs the positive term and broadcasts over the last dimension (shape
    `[C]` for an input `[..., C]`). Per element, as PyTorch's
    binary_cross_entropy_with_logits:
    `(1 - t) x - (1 + (pw - 1) t) log_sigmoid(x)`, with
    `log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))`. `reduction` is "mean"
    (default), "sum" or "none" (the input's shape).

    ```mlir
    %l = graph.binary_cross_entropy_with_logits %z, %t, %pw : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$target,
      Optional<Graph_FloatTensor>:$pos_weight,
      DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $target (`,` $pos_weight^)? attr-dict `:` type($input) `,`
    type($target) (`,` type($pos_weight)^)? `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// argmax, gather, cumsum
//===----------------------------------------------------------------------===//

def Graph_ArgmaxOp : Graph_ComputeOp<"argmax"> {
  let summary = "Index of the maximum along an axis (i64, no gradient)";
  let description = [{
    `axis` may be negative; `keepdim` keeps it as size 1. Ties give the
    first index and a NaN counts as the maximum (torch.argmax). The result
    is i64 and has no gradient: autodiff never differentiates through it.

    ```mlir
    %i = graph.argmax %z {axis = -1 : i64} : tensor<64x10xf32> -> tensor<64xi64>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis,
      DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs I64Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_GatherOp : Graph_ComputeOp<"gather", [Graph_VJP]> {
  let summary = "Values picked along an axis by an index tensor (torch.gather)";
  let description = [{
    `index` (i32/i64) has the input's rank; the result has the index's
    shape: `result[i][j][k] = input[i][index[i][j][k]][k]` for `axis = 1`.
    Along the other axes the index may be smaller than the input
    (torch.gather; torch.take_along_dim when the shapes agree). Index
    values must lie in `[0, input.shape[axis])`.

    ```mlir
    %v = graph.gather %x, %i {axis = 1 : i64} : tensor<4x10xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IntTensor:$index,
      I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $index attr-dict `:` type($input) `,` type($index) `->` type($result)
  }];
}

def Graph_CumsumOp : Graph_SameTypeOp<"cumsum", [Graph_VJP]> {
  let summary = "Cumulative sum along an axis";
  let description = [{
    `axis` may be negative. Sums accumulate in FP32 in index order;
    `reverse` sums from the end (the cotangent of cumsum is the reverse
    cumsum of g).

    ```mlir
    %c = graph.cumsum %x {axis = 1 : i64} : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis,
      UnitAttr:$reverse);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention and constants
//===----------------------------------------------------------------------===//

def Graph_ScaledDotProductAttentionOp
    : Graph_ComputeOp<"scaled_dot_product_attention", [Graph_VJP]> {
  let summary = "softmax(q k^T * scale [+ mask]) v";
  let description = [{
    `q: [B, Hq, T, D]`, `k: [B, Hkv, S, D]`, `v: [B, Hkv, S, E]` ->
    `[B, Hq, T, E]` (torch.nn.functional.scaled_dot_product_attention).
    `scale` defaults to 1/sqrt(D); `causal` masks keys after the query
    position (top-left aligned, as is_causal).

    Grouped-query attention: `Hq` may be a multiple of `Hkv`; kv head `j`
    serves the `Hq/Hkv` consecutive query heads `j*Hq/Hkv ...` (PyTorch's
    enable_gqa=True).

    The optional `mask` broadcasts (numpy rules) to `[B, Hq, T, S]`, as
    attn_mask: an integer mask (i32/i64) keeps the keys where it is nonzero
    (PyTorch's boolean mask); a float mask of q's element type is added to
    the scaled scores. A query row whose keys are all masked attends to
    nothing: its result (and its gradient) is 0, as in PyTorch 2.15.
    A float mask computed from parameters (a learned bias) gets the gradient
    of the scores, summed over its broadcast axes; other masks get none.

    `dropout_p` (default 0) drops attention weights in training, as
    dropout_p does: `graph-desugar` rewrites such an op into PyTorch's math
    path (batch_matmul, scale, masks, softmax, `graph.dropout` with a keyed
    counter-based mask, batch_matmul), so the dropout is an ordinary
    graph.dropout (off in evaluation like every other). On that path a
    fully masked row gives NaN, as PyTorch's math path does.

    ```mlir
    %o = graph.scaled_dot_product_attention %q, %k, %v {causal} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
    %g = graph.scaled_dot_product_attention %q, %k2, %v2 mask %m : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x1x16x16xi64> -> tensor<2x4x16x8xf32>
    %d = graph.scaled_dot_product_attention %q, %k, %v {causal, dropout_p = 0.1} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$query, Graph_FloatTensor:$key,
      Graph_FloatTensor:$value, Optional<Graph_AnyTensor>:$mask,
      UnitAttr:$causal, OptionalAttr<F64Attr>:$scale,
      DefaultValuedAttr<F64Attr, "0.0">:$dropout_p);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:` type($query)
    `,` type($key) `,` type($value) (`,` type($mask)^)? `->` type($result)
  }];
  let extraClassDeclaration = [{
    // The scale applied to q k^T: the attribute, or 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

def Graph_PackedAttentionOp
    : Graph_ComputeOp<"packed_attention", [Graph_VJP]> {
  let summary = "scaled_dot_product_attention on a packed [B, T, 3E] qkv";
  let description = [{
    `qkv: [B, T, 3E]` -> `[B, T, E]`, with `E = heads * D`: q, k and v are
    the three thirds of qkv's last axis, each seen as `[B, T, heads, D]`;
    the result is the attention's `[B, heads, T, D]` result seen as
    `[B, T, heads, D]`. It is exactly

    ```
    q = transpose(reshape(slice(qkv, [0, E)),   [B, T, H, D]), 0, 2, 1, 3)
    k = ... [E, 2E) ..., v = ... [2E, 3E) ...
    reshape(transpose(scaled_dot_product_attention(q, k, v), 0, 2, 1, 3),
            [B, T, E])
    ```

    (GPT-2's attention after its fused qkv projection), which
    `graph-fuse-packed-attention` rewrites into this op, so that the
    kernels read q, k and v as strided views of qkv and write the result
    in place: no slice, transpose or concat copies around the attention.
    `causal` and `scale` (default 1/sqrt(D)) as in
    scaled_dot_product_attention; no mask, no dropout.

    ```mlir
    %o = graph.packed_attention %qkv {heads = 4 : i64, causal} : tensor<2x16x96xf32> -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, I64Attr:$heads,
      UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$qkv attr-dict `:` type($qkv) `->` type($result)";
  let extraClassDeclaration = [{
    // The scale applied to q k^T: the attribute, or 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

def Graph_ConstantOp : Graph_Op<"constant", [Pure, ConstantLike,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "A constant tensor";
  let description = [{
    ```mlir
    %c = graph.constant dense<0.5> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Model state and batch normalization
//===----------------------------------------------------------------------===//

// Like graph.param, not Pure: a buffer nothing reads is still checkpointed.
def Graph_BufferOp : Graph_Op<"buffer", [HasParent<"ModelOp">]> {
  let summary = "Named model state that is not a trainable parameter";
  let description = [{
    A buffer (PyTorch's `register_buffer`): FP32 state the model keeps across
    steps, such as batch_norm's running statistics. It has no gradient and no
    optimizer state; it is saved in checkpoints (model.safetensors) under its
    name and restored on resume. `init` is a `#graph` initializer (zeros,
    ones, constant). The only op that writes a buffer is graph.batch_norm in
    the training step; under data parallelism each rank keeps its own.

    ```mlir
    %rm = graph.buffer "bn1.running_mean" init(#graph.zeros) : tensor<16xf32>
    %rv = graph.buffer "bn1.running_var" init(#graph.ones) : tensor<16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, AnyAttr:$init);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$name `init` `(` $init `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_BatchNormOp : Graph_ComputeOp<"batch_norm", [Graph_VJP]> {
  let summary = "Batch normalization over all axes but the channel axis 1";
  let description = [{
    torch.nn.BatchNorm1d/2d on `x: [N, C]` or `[N, C, H, W]` with the affine
    `weight` and `bias` `[C]` and the running statistics `running_mean` and
    `running_var` `[C]`, which must be `graph.buffer` values (FP32).

    In the training step the op normalises with the batch statistics (biased
    variance) and updates the running statistics in place:
    `r = (1 - momentum) * r + momentum * s`, with the unbiased variance
    (`n / (n - 1)`, n = N*H*W) for `running_var`. In evaluation (the
    compiled forward the binary evaluates with, as `model.eval()`) it
    normalises with the running statistics and updates nothing. The
    reference interpreter runs the training form without the update.

    An optional string attribute `num_batches_tracked` names PyTorch's third
    BatchNorm buffer (an int64 count of training forwards), which the runtime
    keeps and checkpoints under that name (docs/ARCHITECTURE.md).

    ```mlir
    %y = graph.batch_norm %x, %rm, %rv, %w, %b {eps = 1.0e-05, momentum = 0.1} : tensor<8x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x6x6xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      RankedTensorOf<[F32]>:$running_mean, RankedTensorOf<[F32]>:$running_var,
      Graph_FloatTensor:$weight, Graph_FloatTensor:$bias,
      DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
      DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $running_mean `,` $running_var `,` $weight `,` $bias attr-dict
    `:` type($input) `,` type($running_mean) `,` type($running_var) `,`
    type($weight) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_GroupNormOp : Graph_ComputeOp<"group_norm", [Graph_VJP]> {
  let summary = "Group normalization over channel groups";
  let description = [{
    torch.nn.GroupNorm on `x: [N, C, *]`: the C channels are split into
    `num_groups` groups of C / num_groups; each (sample, group) is
    normalised with its own mean and biased variance, then scaled and
    shifted per channel by `weight` and `bias` `[C]`. No state.

    ```mlir
    %y = graph.group_norm %x, %w, %b {num_groups = 2, eps = 1.0e-05} : tensor<8x4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x6x6xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
      Graph_FloatTensor:$bias, I64Attr:$num_groups,
      DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight)
    `,` type($bias) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Shape sugar: rewritten by graph-desugar (run when a model file is loaded,
// so by every ampc command), so later passes, kernels and reports see only
// graph.reshape and graph.broadcast_to.
//===----------------------------------------------------------------------===//

def Graph_SqueezeOp : Graph_Op<"squeeze", [Pure]> {
  let summary = "Drop size-1 dimensions (torch.squeeze)";
  let description = [{
    Removes the listed `axes` that have size 1 (negative axes count from
    the end; a listed axis of another size stays, as in torch.squeeze), or
    every size-1 dimension when `axes` is absent. The result type spells
    the shape. `graph-desugar` rewrites it to `graph.reshape`.

    ```mlir
    %y = graph.squeeze %x {axes = array<i64: 1>} : tensor<4x1x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_UnsqueezeOp : Graph_Op<"unsqueeze", [Pure]> {
  let summary = "Insert size-1 dimensions (torch.unsqueeze)";
  let description = [{
    `axes` name positions in the result (negative: from its end), where a
    size-1 dimension is inserted; the other dimensions are the input's, in
    order. The result type spells the shape. `graph-desugar` rewrites it to
    `graph.reshape`.

    ```mlir
    %y = graph.unsqueeze %x {axes = array<i64: 0, -1>} : tensor<4x8xf32> -> tensor<1x4x8x1xf32>
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ExpandOp : Graph_Op<"expand", [Pure]> {
  let summary = "Broadcast to a shape (torch.Tensor.expand, broadcast_to)";
  let description = [{
    numpy broadcasting to the result type's shape: leading dimensions may be
    added and size-1 dimensions repeated. `graph-desugar` rewrites it to
    `graph.broadcast_to`, whose backward sums the cotangent back to the
    input's shape.

    ```mlir
    %y = graph.expand %x : tensor<4x1xf32> -> tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Resampling: adaptive average pooling, nearest and bilinear upsampling
// (NCHW)
//===----------------------------------------------------------------------===//

def Graph_AdaptiveAvgPool2dOp : Graph_ComputeOp<"adaptive_avg_pool2d", [Graph_VJP]> {
  let summary = "Adaptive average pooling to a fixed H x W (torch.nn.functional.adaptive_avg_pool2d)";
  let description = [{
    `input: [N, C, H, W]` -> `[N, C, OH, OW]` with `output_size = [OH, OW]`
    (any positive sizes). Output row i averages input rows
    [floor(i*H/OH), ceil((i+1)*H/OH)), the same for columns; windows need
    not divide evenly and may overlap. `output_size = [1, 1]` is global
    average pooling.

    ```mlir
    %y = graph.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<8x64x7x7xf32> -> tensor<8x64x1x1xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      DenseI64ArrayAttr:$output_size);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_UpsampleNearest2dOp : Graph_ComputeOp<"upsample_nearest2d", [Graph_VJP]> {
  let summary = "Nearest-neighbour upsampling (F.interpolate, mode=\"nearest\")";
  let description = [{
    `input: [N, C, H, W]` -> `[N, C, OH, OW]`. Give either `size = [OH, OW]`
    (F.interpolate's `size`) or both `scales_h` and `scales_w`
    (its `scale_factor`; OH = floor(H * scales_h)). Output row i reads
    input row min(floor(i * s), H - 1) with s = float(1 / scales_h) when
    the scales are given, else float(H) / float(OH) (aten's
    upsample_nearest2d: PyTorch's "nearest", not "nearest-exact"); the
    same for columns.

    ```mlir
    %y = graph.upsample_nearest2d %x {scales_h = 2.0, scales_w = 2.0} : tensor<8x16x7x7xf32> -> tensor<8x16x14x14xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      OptionalAttr<DenseI64ArrayAttr>:$size,
      OptionalAttr<F64Attr>:$scales_h,
      OptionalAttr<F64Attr>:$scales_w);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_UpsampleBilinear2dOp : Graph_ComputeOp<"upsample_bilinear2d", [Graph_VJP]> {
  let summary = "Bilinear upsampling (F.interpolate, mode=\"bilinear\")";
  let description = [{
    `input: [N, C, H, W]` -> `[N, C, OH, OW]`, sized as
    `graph.upsample_nearest2d` (`size = [OH, OW]`, or both `scales_h` and
    `scales_w` with OH = floor(H * scales_h)). Output row i reads input
    rows r0 = floor(src) and r1 = min(r0 + 1, H - 1) with weights 1 - t and
    t = src - r0, where src = i * (H - 1) / (OH - 1) with `align_corners`,
    else max(s * (i + 0.5) - 0.5, 0) with s = float(1 / scales_h) when the
    scales are given, else H / OH (aten's upsample_bilinear2d, in float;
    an unchanged size copies). The same for columns; the four reads are
    combined as h0 * (w0 * a + w1 * b) + h1 * (w0 * c + w1 * d).
    Downsampling reads only those taps (no antialiasing, as PyTorch's
    default).

    ```mlir
    %y = graph.upsample_bilinear2d %x {scales_h = 2.0, scales_w = 2.0} : tensor<8x16x7x7xf32> -> tensor<8x16x14x14xf32>
    %z = graph.upsample_bilinear2d %x {size = array<i64: 20, 20>, align_corners = true} : tensor<8x16x7x7xf32> -> tensor<8x16x20x20xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      OptionalAttr<DenseI64ArrayAttr>:$size,
      OptionalAttr<F64Attr>:$scales_h,
      OptionalAttr<F64Attr>:$scales_w,
      DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_ConvTranspose2dOp : Graph_ComputeOp<"conv_transpose2d", [Graph_VJP]> {
  let summary = "2-D transposed convolution, NCHW (torch.nn.functional.conv_transpose2d)";
  let description = [{
    `input: [N, Cin, H, W]`, `weight: [Cin, Cout/groups, KH, KW]` (PyTorch's
    layout for a transposed convolution), optional `bias: [Cout]`.
    `stride`, `padding`, `output_padding` and `dilation` are [h, w] pairs
    (defaults 1, 0, 0, 1); `groups` divides Cin and Cout. The result is
    `[N, Cout, OH, OW]` with
    `OH = (H - 1) * stride - 2 * padding + dilation * (KH - 1) + output_padding + 1`.
    It is the input cotangent of the graph.conv2d with the same weight and
    attributes (graph.conv2d_backward_input) plus the bias, and its VJP is that
    conv2d (input) and graph.conv2d_backward_weight (weight). `output_padding`
    must be smaller than `stride` (PyTorch also allows it below `dilation`
    alone; that case is rejected here).

    ```mlir
    %y = graph.conv_transpose2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : tensor<8x16x7x7xf32>, tensor<16x8x3x3xf32>, tensor<8xf32> -> tensor<8x8x14x14xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
      Optional<Graph_FloatTensor>:$bias,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$output_padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
}

#endif // AMPC_GRAPH_OPS
