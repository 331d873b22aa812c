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

#endif // AMPC_KERNEL_OPS
