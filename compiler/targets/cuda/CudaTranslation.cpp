//===- CudaTranslation.cpp - `ampc-translate --ampc-emit-cuda` -------------===//
#include "compiler/ParseGuard.h"
#include "compiler/targets/cuda/CudaEmitter.h"

void ampc::registerCudaEmitterTranslation() {
  // Like mlir::TranslateFromMLIRRegistration, with the input pre-scanned.
  static bool once = [] {
    ampc::registerGuardedTranslation(
        "ampc-emit-cuda",
        "Print a module after the training pipeline as the CUDA target's CUDA C++",
        [](mlir::Operation *op, llvm::raw_ostream &os) -> mlir::LogicalResult {
          auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
          if (!module)
            return op->emitError() << "expected a module";
          return ampc::emitCudaTrainingProgram(module, os);
        });
    return true;
  }();
  (void)once;
}
