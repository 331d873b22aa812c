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
#include "llvm/ADT/SmallVector.h"
#include "mlir/Support/LLVM.h"
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

// |shape| permuted (result dimension i is dimension perm[i]), or failure
// when |perm| is not a permutation of its axes (slice's `perm`).
inline mlir::FailureOr<llvm::SmallVector<int64_t>>
permuteShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> perm) {
  if (perm.size() != shape.size())
    return mlir::failure();
  llvm::SmallVector<bool> used(shape.size(), false);
  llvm::SmallVector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(shape.size()) || used[p])
      return mlir::failure();
    used[p] = true;
    out.push_back(shape[p]);
  }
  return out;
}

} // namespace ampc::graph::detail

#endif // AMPC_DIALECTS_GRAPH_SHAPETEXT_H
