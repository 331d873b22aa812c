//===- GraphAttrs.h - Parameter initializer attributes ----------*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHATTRS_H
#define AMPC_DIALECTS_GRAPH_GRAPHATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/bit.h"

namespace ampc::graph {
// A double that attribute storage can hash and compare bitwise; initializer
// parameters are written as plain floats (`#graph.normal<std = 0.02>`).
struct Real {
  double value = 0;
  operator double() const { return value; }
  bool operator==(const Real &o) const {
    return llvm::bit_cast<uint64_t>(value) == llvm::bit_cast<uint64_t>(o.value);
  }
  friend llvm::hash_code hash_value(Real r) {
    return llvm::hash_value(llvm::bit_cast<uint64_t>(r.value));
  }
};
} // namespace ampc::graph

namespace mlir {
template <>
struct FieldParser<ampc::graph::Real> {
  static FailureOr<ampc::graph::Real> parse(AsmParser &parser) {
    double value;
    if (parser.parseFloat(value))
      return failure();
    return ampc::graph::Real{value};
  }
};
} // namespace mlir

namespace ampc::graph {
// Prints a double in its shortest round-tripping form, always as a float
// literal ("2.0", "0.02", "1.0e-05").
void printDouble(mlir::AsmPrinter &printer, double value);
// Returns true if |attr| is one of the #graph initializer attributes.
bool isInitializerAttr(mlir::Attribute attr);
} // namespace ampc::graph

#define GET_ATTRDEF_CLASSES
#include "dialects/Graph/GraphAttrs.h.inc"

#endif
