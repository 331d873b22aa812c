//===- NamedLoader.h - Load a model file keeping SSA names ------*- C++ -*-===//
#ifndef AMPC_COMPILER_AMP_NAMEDLOADER_H
#define AMPC_COMPILER_AMP_NAMEDLOADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

// Like loadModelFile, but each op whose first result has a written name
// (`%ln1 = graph.layer_norm ...`) gets the location loc("ln1"(file:line:col))
// so reports can name it and policy pins can match it (`pin fp32: ln1`).
// Numeric names (%0) are not recorded.
mlir::OwningOpRef<mlir::ModuleOp>
loadModelFileWithNames(mlir::MLIRContext &context, llvm::StringRef path);

} // namespace ampc

#endif
