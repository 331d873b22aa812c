//===- ampc-opt.cpp - MlirOptMain with every ampc dialect and pass --------===//
//
// MlirOptMain(argc, argv, ...) with the input pre-scanned (see
// compiler/ParseGuard.h) and everything run on the parser's large stack.
//
//===----------------------------------------------------------------------===//
#include "compiler/InitAll.h"
#include "compiler/ParseGuard.h"

#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static int optMain(int argc, char **argv, DialectRegistry &registry) {
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "ampc optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // These read no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  // What MlirOptMain(argc, argv, inputFilename, ...) does, with the scan
  // between reading the input (perhaps stdin, read once) and parsing it.
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (!ampc::prescanAndReport(file->getBufferIdentifier(), file->getBuffer(),
                              config.inputSplitMarker()))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  ampc::registerAllDialects(registry);
  ampc::registerAllPasses();
  int status = 1;
  ampc::runWithParserStack([&] { status = optMain(argc, argv, registry); });
  return status;
}
