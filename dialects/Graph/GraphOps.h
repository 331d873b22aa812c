//===- GraphOps.h - Graph dialect ops ---------------------------*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHOPS_H
#define AMPC_DIALECTS_GRAPH_GRAPHOPS_H

#include "dialects/Graph/GraphAttrs.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace ampc::graph {

// Name of the optional per-op precision pin attribute.
inline constexpr llvm::StringLiteral kPrecisionAttr = "precision";

// Checks `precision` is one of "fp32", "fp16", "bf16", "half".
mlir::LogicalResult verifyPrecisionPin(mlir::Operation *op);

template <typename ConcreteType>
class PrecisionPin
    : public mlir::OpTrait::TraitBase<ConcreteType, PrecisionPin> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyPrecisionPin(op);
  }
};

class OutputOp;

// The element type of a tensor value.
inline mlir::Type elementTypeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

// Why scaled_dot_product_attention's q, k, v and optional mask (null when
// absent) do not fit together (grouped heads, mask broadcasting); empty when
// they do. Shared by the op's shape inference and its backward's verifier.
std::string attentionOperandError(mlir::Value q, mlir::Value k, mlir::Value v,
                                  mlir::Value mask);

// Why packed_attention's qkv [B, T, 3E] with |heads| heads is malformed
// (rank, 3E not a multiple of 3 * heads); empty when it is not. Shared by
// the op's shape inference and its backward's verifier.
std::string packedAttentionError(mlir::Value qkv, int64_t heads);

// Rewrites the shape sugar under |root| into core ops (GraphSugar.cpp):
// squeeze/unsqueeze -> reshape, expand -> broadcast_to, broadcasting
// matmul/batch_matmul -> 2-D matmul or batch_matmul on equal batches.
void desugar(mlir::Operation *root);

// True for the ops whose kernels (CPU, CUDA, the reference interpreter)
// compute in FP32 whatever their operand and result types, rounding each
// result once from FP32: cross_entropy (class-index labels), layer_norm,
// rms_norm and their backward ops. graph-absorb-casts lets them read and
// write f16/bf16 directly.
bool computesInFP32(mlir::Operation *op);

} // namespace ampc::graph

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.h.inc"

// Backward-only ops (GraphGradOps.td): included here so that this header
// declares every op of the dialect.
#include "dialects/Graph/GraphGradOps.h"

#endif
