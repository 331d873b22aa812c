//===- InitAll.cpp ---------------------------------------------------------===//
#include "compiler/InitAll.h"

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Kernel/KernelOps.h"
#include "dialects/Train/TrainOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void ampc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<ampc::graph::GraphDialect, ampc::train::TrainDialect,
                  ampc::kernel::KernelDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect>();
}

void ampc::registerAllPasses() {
  static bool once = [] {
    ampc::registerAmpcPasses();
    ampc::registerPipelines();
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
    mlir::registerSymbolDCEPass();
    return true;
  }();
  (void)once;
}
