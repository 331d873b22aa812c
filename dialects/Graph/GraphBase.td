//===- GraphBase.td - The Graph dialect and its base op class ----*- td -*-===//
//
// The Graph dialect is the model-file IR: value-semantics ops on statically
// shaped tensors. Every op carries a verifier and static shape inference.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_GRAPH_BASE
#define AMPC_GRAPH_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::ampc::graph";
  let summary = "Model files: tensors, parameters, and the ops of MLPs, CNNs and transformers";
  let description = [{
    A model is one `graph.model` op holding its named data inputs
    (`graph.input`), its trainable parameters with their initializers
    (`graph.param`), the computation, and a `graph.output` terminator that
    names the loss and any other outputs.

    Any compute op may carry a `precision` attribute ("fp32", "fp16", "bf16"
    or "half") that pins the precision the AMP passes give it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

// Verifies the optional user pin `precision = "fp32" | "fp16" | "bf16" | "half"`.
def Graph_PrecisionPin : NativeOpTrait<"PrecisionPin"> {
  let cppNamespace = "::ampc::graph";
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, !listconcat(traits, [Graph_PrecisionPin])>;

// Compute ops: no side effects, result types inferred (and checked when the
// file spells them out).
class Graph_ComputeOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

// Ops whose result has the operand's type; ODS derives the inference.
class Graph_SameTypeOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                              InferTypeOpInterface])>;

// Compute ops whose kernels compute in FP32 whatever their operand and
// result types (graph-absorb-casts lets them read and write f16/bf16
// directly): a result type is compatible with the inferred one when only
// its float element type differs (isCompatibleReturnTypes, GraphShapes.cpp).
class Graph_FP32ComputeOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure,
                                              InferTypeOpAdaptorWithIsCompatible])>;

def Graph_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Graph_IntTensor : RankedTensorOf<[I32, I64]>;
def Graph_AnyTensor : RankedTensorOf<[F32, F16, BF16, I32, I64]>;

#endif // AMPC_GRAPH_BASE
