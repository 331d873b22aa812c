//===- ShapeText.h - Helpers the graph ops' verifiers share -----*- C++ -*-===//
//
// Internal to dialects/Graph: how shape-inference and verifier messages spell
// a shape, reach a value's tensor type, and fail with or without a location.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_SHAPETEXT_H
#define AMPC_DIALECTS_GRAPH_SHAPETEXT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace ampc::graph::detail {

inline mlir::RankedTensorType tensorOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

// "[2, 3]".
inline std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, ", ");
  return s + "]";
}

// An error at |loc| when inference has one (verifiers), silent otherwise.
inline mlir::LogicalResult fail(std::optional<mlir::Location> loc,
                                const llvm::Twine &msg) {
  return mlir::emitOptionalError(loc, msg);
}

} // namespace ampc::graph::detail

#endif // AMPC_DIALECTS_GRAPH_SHAPETEXT_H
