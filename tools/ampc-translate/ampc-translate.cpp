//===- ampc-translate.cpp - Emitters as translations, for lit tests -------===//
//
// The translations pre-scan their input (ampc::registerGuardedTranslation);
// mlirTranslateMain runs on the parser's large stack.
//
//===----------------------------------------------------------------------===//
#include "compiler/ParseGuard.h"
#include "compiler/targets/cpu/CpuEmitter.h"
#include "compiler/targets/cuda/CudaEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  ampc::registerCpuEmitterTranslation();
  ampc::registerCudaEmitterTranslation();
  int status = 1;
  ampc::runWithParserStack([&] {
    status = mlir::failed(
        mlir::mlirTranslateMain(argc, argv, "ampc translation driver\n"));
  });
  return status;
}
