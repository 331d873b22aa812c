//===- ampc-opt.cpp - MlirOptMain with every ampc dialect and pass --------===//
#include "compiler/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  ampc::registerAllDialects(registry);
  ampc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ampc optimizer driver\n", registry));
}
