//===- Diagnostics.h - How ampc prints diagnostics ---------------*- C++ -*-===//
#ifndef AMPC_COMPILER_DIAGNOSTICS_H
#define AMPC_COMPILER_DIAGNOSTICS_H

#include "mlir/IR/MLIRContext.h"

namespace ampc {

// Registers |context|'s fallback diagnostic handler: every diagnostic that
// no scoped handler takes (the model loader's SourceMgr handler takes those
// of parsing and verification; passes and emitters run after it is gone)
// prints to stderr as `file:line:col: error: message` with the source line
// when the file can be read again, and its notes the same way; never in the
// `loc("file":L:C): error:` form of MLIR's default handler.
void installDiagnosticPrinter(mlir::MLIRContext &context);

} // namespace ampc

#endif
