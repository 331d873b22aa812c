//===- ModelLoader.cpp ------------------------------------------------------===//
#include "compiler/ModelLoader.h"

#include "compiler/Diagnostics.h"
#include "compiler/InitAll.h"
#include "compiler/ParseGuard.h"
#include "passes/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::unique_ptr<MLIRContext> ampc::createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Users read these errors against their own file: the source line is
  // shown, the generic form of the op would only add noise.
  context->printOpOnDiagnostic(false);
  // Passes and emitters report as file:line:col too.
  installDiagnosticPrinter(*context);
  return context;
}

// Parses and verifies the model in |sourceMgr|'s main buffer; runs on the
// parser's large stack.
static OwningOpRef<ModuleOp> parseModel(MLIRContext &context,
                                        llvm::SourceMgr &sourceMgr,
                                        llvm::StringRef path) {
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  Block block;
  AsmParserState state;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state)))
    return nullptr;

  for (const AsmParserState::OperationDefinition &def : state.getOpDefs()) {
    if (def.resultGroups.empty() || def.resultGroups.front().startIndex != 0)
      continue;
    llvm::SMRange range = def.resultGroups.front().definition.loc;
    llvm::StringRef name(range.Start.getPointer(),
                         range.End.getPointer() - range.Start.getPointer());
    name.consume_front("%");
    if (name.empty() || llvm::all_of(name, llvm::isDigit))
      continue;
    def.op->setLoc(NameLoc::get(StringAttr::get(&context, name),
                                def.op->getLoc()));
  }

  // A file holding `module { ... }` gives that module; otherwise wrap.
  OwningOpRef<ModuleOp> module;
  if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
    module = cast<ModuleOp>(block.front());
    module.get()->remove();
  } else {
    module = ModuleOp::create(FileLineColLoc::get(&context, path, 1, 1));
    module->getBody()->getOperations().splice(
        module->getBody()->begin(), block.getOperations());
  }
  if (failed(mlir::verify(module->getOperation())))
    return nullptr;
  PassManager pm(&context);
  pm.addPass(ampc::createGraphVerifyModel());
  pm.addPass(ampc::createGraphDesugar()); // every tool sees only core ops
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
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
  // MLIR 22's parser crashes on some texts and recurses once per nesting
  // level: reject those first, then parse with a stack deep enough for any
  // nesting the scan lets through.
  if (!prescanAndReport(file->getBufferIdentifier(), file->getBuffer()))
    return nullptr;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  runWithParserStack([&] { module = parseModel(context, sourceMgr, path); });
  return module;
}

ampc::graph::ModelOp ampc::getModel(ModuleOp module) {
  for (auto model : module.getOps<graph::ModelOp>())
    return model;
  return nullptr;
}
