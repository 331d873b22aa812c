//===- CpuTranslation.cpp - `ampc-translate --ampc-emit-cpu` ---------------===//
#include "compiler/ParseGuard.h"
#include "compiler/targets/cpu/CpuEmitter.h"

void ampc::registerCpuEmitterTranslation() {
  // Like mlir::TranslateFromMLIRRegistration, with the input pre-scanned.
  static bool once = [] {
    ampc::registerGuardedTranslation(
        "ampc-emit-cpu",
        "Print a module after the training pipeline as the CPU target's C++",
        [](mlir::Operation *op, llvm::raw_ostream &os) -> mlir::LogicalResult {
          auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
          if (!module)
            return op->emitError() << "expected a module";
          return ampc::emitCpuTrainingProgram(module, os);
        });
    return true;
  }();
  (void)once;
}
