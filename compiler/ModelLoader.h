//===- ModelLoader.h - Read and verify a model file -------------*- C++ -*-===//
#ifndef AMPC_COMPILER_MODELLOADER_H
#define AMPC_COMPILER_MODELLOADER_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

// Creates a context with every ampc dialect loaded.
std::unique_ptr<mlir::MLIRContext> createContext();

// Parses and verifies |path| ("-" for stdin) as a model file holding one
// graph.model. Diagnostics go to stderr as file:line:col; returns null on
// any error. Each op whose first result has a written name
// (`%ln1 = graph.layer_norm ...`) gets the location loc("ln1"(file:line:col))
// so reports can name it and policy pins can match it (`pin fp32: ln1`);
// numeric names (%0) are not recorded.
mlir::OwningOpRef<mlir::ModuleOp> loadModelFile(mlir::MLIRContext &context,
                                                llvm::StringRef path);

// The single graph.model of a loaded module.
graph::ModelOp getModel(mlir::ModuleOp module);

} // namespace ampc

#endif
