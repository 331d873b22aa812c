//===- KernelOps.td - The kernel level ----------------------------*- td -*-===//
//
// What the targets emit: fused elementwise loops (this dialect) next to
// library calls (graph ops left as they are, one kernel call each). The
// static memory plan is recorded as attributes (see KernelOps.h).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_KERNEL_OPS
#define AMPC_KERNEL_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kernel_Dialect : Dialect {
  let name = "kernel";
  let cppNamespace = "::ampc::kernel";
  let summary = "Kernel level: fused elementwise loops and the memory plan";
  let description = [{
    Prepared for emission by `kernel-fuse-elementwise` and
    `kernel-plan-memory`; emitters print it without changing it.
  }];
}

class Kernel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kernel_Dialect, mnemonic, traits>;

def Kernel_FusedElementwiseOp : Kernel_Op<"fused_elementwise", [
    IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">, Pure]> {
  let summary = "A chain of elementwise graph ops computed in one loop";
  let description = [{
    One loop over the elements of the results (which share a shape). The
    region's arguments are the inputs, read with numpy broadcasting; its
    body holds elementwise graph ops. Each op computes in FP32 and rounds to
    its own result type, so fusing does not change the numbers. Every value
    the rest of the program needs is yielded and becomes a result.

    ```mlir
    %r = kernel.fused_elementwise ins(%h, %b : tensor<4x8xf16>, tensor<8xf16>) {
    ^bb0(%x: tensor<4x8xf16>, %y: tensor<8xf16>):
      %s = graph.add %x, %y : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
      %a = graph.relu %s : tensor<4x8xf16>
      kernel.yield %a : tensor<4x8xf16>
    } -> tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` $body attr-dict `->` type($results)
  }];
  let hasRegionVerifier = 1;
}

def Kernel_YieldOp : Kernel_Op<"yield", [Pure, Terminator,
    HasParent<"FusedElementwiseOp">]> {
  let summary = "The values a fused elementwise loop stores";
  let description = [{
    ```mlir
    kernel.yield %a, %b : tensor<4x8xf32>, tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Kernel_AddLayerNormOp : Kernel_Op<"add_layer_norm", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "A residual add and the layer_norm of its sum, one row pass";
  let description = [{
    `sum = lhs + rhs` (each widened to FP32, added in FP32, stored as f32),
    then `result = layer_norm(sum, weight, bias)` over the last axis with the
    biased variance, rounded once to the result's type: bitwise the
    `kernel.fused_elementwise {add}` and `graph.layer_norm` it replaces
    (kernel-fuse-residual-norm), in one read of the operands instead of a
    write and a read of the sum.

    ```mlir
    %s, %y = kernel.add_layer_norm %r, %d, %w, %b {eps = 1.0e-05} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
      Optional<AnyRankedTensor>:$weight, Optional<AnyRankedTensor>:$bias,
      DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs AnyRankedTensor:$sum, AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $weight^)? (`,` $bias^)? attr-dict `:` type($lhs) `,`
    type($rhs) (`,` type($weight)^)? (`,` type($bias)^)? `->` type($sum) `,`
    type($result)
  }];
  let hasVerifier = 1;
}

def Kernel_LayerNormBackwardAddOp : Kernel_Op<"layer_norm_backward_add",
    [Pure]> {
  let summary = "layer_norm_backward with the residual gradient added to dx";
  let description = [{
    `graph.layer_norm_backward %x, %weight, %g` whose input gradient, in
    FP32, is added to `acc` (widened to FP32) before it is stored: `dx_sum =
    dx + acc` (f32), and `dx_half`, when present, the same sum rounded to
    f16 or bf16. Bitwise the `graph.layer_norm_backward` and the
    `kernel.fused_elementwise {add; cast}` it replaces
    (kernel-fuse-residual-norm): FP32 addition is commutative, so the order
    of the add's operands does not matter.

    ```mlir
    %dx, %dw, %db, %dxh = kernel.layer_norm_backward_add %x, %w, %g, %acc {eps = 1.0e-05} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x32xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$weight,
      AnyRankedTensor:$g, AnyRankedTensor:$acc,
      DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs AnyRankedTensor:$dx_sum, AnyRankedTensor:$dweight,
      AnyRankedTensor:$dbias, Optional<AnyRankedTensor>:$dx_half);
  let assemblyFormat = [{
    $x `,` $weight `,` $g `,` $acc attr-dict `:` type($x) `,` type($weight)
    `,` type($g) `,` type($acc) `->` type($dx_sum) `,` type($dweight) `,`
    type($dbias) (`,` type($dx_half)^)?
  }];
  let hasVerifier = 1;
}

def Kernel_AddRmsNormOp : Kernel_Op<"add_rms_norm", [Pure]> {
  let summary = "A residual add and the rms_norm of its sum, one row pass";
  let description = [{
    `kernel.add_layer_norm` for `graph.rms_norm`: `sum = lhs + rhs` in FP32
    (stored as f32), `result = rms_norm(sum, weight)`; without `eps`, the
    machine epsilon of f32 (the sum's type), as rms_norm. Bitwise the add
    loop and the rms_norm it replaces (kernel-fuse-residual-norm).

    ```mlir
    %s, %y = kernel.add_rms_norm %r, %d, %w {eps = 1.0e-05} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
      Optional<AnyRankedTensor>:$weight, OptionalAttr<F64Attr>:$eps);
  let results = (outs AnyRankedTensor:$sum, AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $weight^)? attr-dict `:` type($lhs) `,` type($rhs)
    (`,` type($weight)^)? `->` type($sum) `,` type($result)
  }];
  let hasVerifier = 1;
}

def Kernel_RmsNormBackwardAddOp : Kernel_Op<"rms_norm_backward_add", [Pure]> {
  let summary = "rms_norm_backward with the residual gradient added to dx";
  let description = [{
    `kernel.layer_norm_backward_add` for `graph.rms_norm_backward`:
    `dx_sum = dx + acc` in FP32 (f32), `dweight`, and `dx_half`, when
    present, the sum rounded to f16 or bf16. Without `eps`, the machine
    epsilon of x's type, as rms_norm_backward.

    ```mlir
    %dx, %dw, %dxh = kernel.rms_norm_backward_add %x, %w, %g, %acc : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$weight,
      AnyRankedTensor:$g, AnyRankedTensor:$acc, OptionalAttr<F64Attr>:$eps);
  let results = (outs AnyRankedTensor:$dx_sum, AnyRankedTensor:$dweight,
      Optional<AnyRankedTensor>:$dx_half);
  let assemblyFormat = [{
    $x `,` $weight `,` $g `,` $acc attr-dict `:` type($x) `,` type($weight)
    `,` type($g) `,` type($acc) `->` type($dx_sum) `,` type($dweight)
    (`,` type($dx_half)^)?
  }];
  let hasVerifier = 1;
}

#endif // AMPC_KERNEL_OPS
