//===- VJPBuilder.h - Helpers shared by the VJPs of graph ops ---*- C++ -*-===//
//
// The VJPs build forward graph ops; these helpers keep them short and emit
// nothing when an op would be the identity (a reshape to the same shape, a
// sum over no axes), so the backward IR stays readable.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_VJP_VJPBUILDER_H
#define AMPC_DIALECTS_GRAPH_VJP_VJPBUILDER_H

#include "dialects/Graph/GraphOps.h"

namespace ampc::graph::vjp {

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

// A rank-0 constant of |elementType|; binary ops broadcast it.
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::Type elementType, double value);

// A constant of |type| filled with |value|.
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type, double value);

// |v| reshaped to |shape| (|v| itself when the shape already matches).
mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    llvm::ArrayRef<int64_t> shape);

// Undoes numpy broadcasting: sums the cotangent |g| of a broadcast result
// down to |type|, the operand's type (leading axes and size-1 axes).
mlir::Value sumToType(mlir::OpBuilder &b, mlir::Location loc, mlir::Value g,
                      mlir::RankedTensorType type);

// |v| broadcast to |type| (|v| itself when the shape already matches).
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        mlir::RankedTensorType type);

// |v| with its last two dimensions swapped.
mlir::Value transposeLast2(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v);

// Which of |rank| axes |axes| reduces (all when empty; negative axes count
// from the end), as in graph.reduce_*.
llvm::SmallVector<bool> reducedAxes(llvm::ArrayRef<int64_t> axes,
                                    int64_t rank);

// The cotangents (logits, labels) of a cross_entropy with class-probability
// labels (vjp/LossIndex.cpp).
llvm::SmallVector<mlir::Value> softCrossEntropyVJP(mlir::OpBuilder &b,
                                                   CrossEntropyOp op,
                                                   mlir::Value g);

} // namespace ampc::graph::vjp

#endif
