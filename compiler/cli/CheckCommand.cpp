//===- CheckCommand.cpp - `ampc check MODEL.mlir` --------------------------===//
//
// Parses and verifies a model file and prints a one-screen summary.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/ModelSummary.h"
#include "compiler/cli/Command.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runCheck();

ampc::cli::Command checkCommand(
    "check", "Parse and verify a model file and summarise it", runCheck);

cl::list<std::string> inputFiles(cl::Positional, cl::OneOrMore,
                                 cl::desc("<model.mlir>..."),
                                 cl::sub(checkCommand),
                                 cl::cat(ampc::cli::category()));

int runCheck() {
  auto context = ampc::createContext();
  int failures = 0;
  for (const std::string &path : inputFiles) {
    auto module = ampc::loadModelFile(*context, path);
    if (!module) {
      ++failures;
      continue;
    }
    if (inputFiles.size() > 1)
      outs() << "== " << path << "\n";
    ampc::printModelSummary(ampc::getModel(*module), outs());
    if (inputFiles.size() > 1)
      outs() << "\n";
  }
  return failures ? 1 : 0;
}
} // namespace
