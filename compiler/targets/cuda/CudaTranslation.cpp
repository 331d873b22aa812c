//===- CudaTranslation.cpp - `ampc-translate --ampc-emit-cuda` -------------===//
#include "compiler/InitAll.h"
#include "compiler/targets/cuda/CudaEmitter.h"

#include "mlir/Tools/mlir-translate/Translation.h"

void ampc::registerCudaEmitterTranslation() {
  static mlir::TranslateFromMLIRRegistration reg(
      "ampc-emit-cuda",
      "Print a module after the training pipeline as the CUDA target's CUDA C++",
      [](mlir::Operation *op, llvm::raw_ostream &os) -> mlir::LogicalResult {
        auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a module";
        return ampc::emitCudaTrainingProgram(module, os);
      },
      [](mlir::DialectRegistry &registry) {
        ampc::registerAllDialects(registry);
      });
}
