//===- InitAll.h - Register every dialect and pass of ampc ------*- C++ -*-===//
#ifndef AMPC_COMPILER_INITALL_H
#define AMPC_COMPILER_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace ampc {
// Every dialect a model file or an ampc pass can produce.
void registerAllDialects(mlir::DialectRegistry &registry);
// Every ampc pass and pipeline, for ampc-opt and the CLI's IR flags.
void registerAllPasses();
} // namespace ampc

#endif
