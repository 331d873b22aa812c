//===- CpuTranslation.cpp - `ampc-translate --ampc-emit-cpu` ---------------===//
#include "compiler/InitAll.h"
#include "compiler/targets/cpu/CpuEmitter.h"

#include "mlir/Tools/mlir-translate/Translation.h"

void ampc::registerCpuEmitterTranslation() {
  static mlir::TranslateFromMLIRRegistration reg(
      "ampc-emit-cpu",
      "Print a module after the training pipeline as the CPU target's C++",
      [](mlir::Operation *op, llvm::raw_ostream &os) -> mlir::LogicalResult {
        auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a module";
        return ampc::emitCpuTrainingProgram(module, os);
      },
      [](mlir::DialectRegistry &registry) {
        ampc::registerAllDialects(registry);
      });
}
