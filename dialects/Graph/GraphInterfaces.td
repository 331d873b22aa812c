//===- GraphInterfaces.td - Op interfaces of the Graph dialect ---*- td -*-===//
//
// VJPOpInterface: each differentiable op builds its own vector-Jacobian
// product, so reverse-mode autodiff (passes/GraphAutodiff.cpp) is a generic
// walk and adding an op means adding its VJP (dialects/Graph/vjp/*.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_GRAPH_INTERFACES
#define AMPC_GRAPH_INTERFACES

include "mlir/IR/OpBase.td"

def Graph_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let cppNamespace = "::ampc::graph";
  let description = [{
    A differentiable op: given the cotangents of its results, it builds the
    cotangents of its operands (the vector-Jacobian product) with graph ops.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the cotangent of each
        operand given `cotangents`, one per result (a null Value is a zero
        cotangent; at least one is non-null). Returns one Value per operand,
        of exactly that operand's type, or null where the operand gets no
        cotangent (integer ids and labels, or an exactly zero cotangent).
        The op's own operands and results may be used (e.g. tanh uses its
        output). Ops built for operands nobody needs are dead and removed by
        the caller.
      }],
      "::llvm::SmallVector<::mlir::Value>", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$cotangents)>
  ];
}

// Attach to an op definition to declare its VJP (defined in vjp/*.cpp).
defvar Graph_VJP = DeclareOpInterfaceMethods<Graph_VJPOpInterface>;

#endif // AMPC_GRAPH_INTERFACES
