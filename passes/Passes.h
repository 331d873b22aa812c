//===- Passes.h - ampc passes and pipelines ---------------------*- C++ -*-===//
#ifndef AMPC_PASSES_PASSES_H
#define AMPC_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace ampc::train {
class TrainDialect;
}
namespace ampc::kernel {
class KernelDialect;
}
namespace mlir::arith {
class ArithDialect;
}
namespace mlir::func {
class FuncDialect;
}

namespace ampc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

// Registers the named pipelines: ampc-train-pipeline (passes/Pipelines.h).
void registerPipelines();

} // namespace ampc

#endif
