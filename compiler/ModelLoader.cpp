//===- ModelLoader.cpp ------------------------------------------------------===//
#include "compiler/ModelLoader.h"

#include "compiler/InitAll.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::unique_ptr<MLIRContext> ampc::createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

OwningOpRef<ModuleOp> ampc::loadModelFile(MLIRContext &context,
                                          llvm::StringRef path) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file) {
    llvm::errs() << "ampc: cannot read model file '" << path << "': " << error
                 << "\n";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return nullptr;
  PassManager pm(&context);
  pm.addPass(createGraphVerifyModel());
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

ampc::graph::ModelOp ampc::getModel(ModuleOp module) {
  for (auto model : module.getOps<graph::ModelOp>())
    return model;
  return nullptr;
}
