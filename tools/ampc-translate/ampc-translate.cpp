//===- ampc-translate.cpp - Emitters as translations, for lit tests -------===//
#include "compiler/targets/cpu/CpuEmitter.h"
#include "compiler/targets/cuda/CudaEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  ampc::registerCpuEmitterTranslation();
  ampc::registerCudaEmitterTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "ampc translation driver\n"));
}
