//===- Command.cpp - Subcommand registry and dispatch ---------------------===//
#include "compiler/cli/Command.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace llvm;

namespace {
std::vector<ampc::cli::Command *> &registry() {
  static std::vector<ampc::cli::Command *> commands;
  return commands;
}
} // namespace

cl::OptionCategory &ampc::cli::category() {
  static cl::OptionCategory cat("ampc options");
  return cat;
}

ampc::cli::Command::Command(StringRef name, StringRef description, RunFn run)
    : cl::SubCommand(name, description), runFn(run) {
  registry().push_back(this);
}

int ampc::cli::runMain(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category());
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "ampc 0.1 (LLVM/MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "ampc - compile models into mixed-precision training binaries\n\n"
      "  ampc <command> [options] MODEL.mlir\n"
      "  ampc <command> --help      options of one command\n");
  for (Command *command : registry())
    if (*command)
      return command->run();
  errs() << "ampc: no command given. Commands:\n";
  for (Command *command : registry())
    errs() << "  " << command->getName() << "\t" << command->getDescription()
           << "\n";
  errs() << "Run `ampc --help` for more.\n";
  return 2;
}
