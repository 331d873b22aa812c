//===- GraphDialect.h - The Graph dialect -----------------------*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define AMPC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"
#include "llvm/ADT/StringRef.h"

#include "dialects/Graph/GraphDialect.h.inc"

namespace ampc::graph {

// The graph-autodiff contract: what each argument and result of
// @<model>_grad is (docs/ARCHITECTURE.md, "Autodiff output").
inline constexpr llvm::StringLiteral kInputAttr = "graph.input";
inline constexpr llvm::StringLiteral kParamAttr = "graph.param";
inline constexpr llvm::StringLiteral kLossScaleAttr = "graph.loss_scale";
inline constexpr llvm::StringLiteral kOutputAttr = "graph.output";
inline constexpr llvm::StringLiteral kGradAttr = "graph.grad";
// A model buffer (graph.buffer) passed to @<model>_grad, after the loss scale.
inline constexpr llvm::StringLiteral kBufferAttr = "graph.buffer";
// The half (f16/bf16) copy of a parameter that the fused epilogue writes
// with each update (train-half-weight-copies): the runtime keeps it.
inline constexpr llvm::StringLiteral kParamCopyAttr = "graph.param_copy";

} // namespace ampc::graph

#endif
