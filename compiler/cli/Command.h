//===- Command.h - ampc subcommands -----------------------------*- C++ -*-===//
//
// Each `ampc <command>` lives in its own file under compiler/cli/ and
// registers itself with a static Command object (a function-local one for
// `compile` and `cost`, whose shared options PipelineFlags.cpp declares);
// its options use `llvm::cl::sub(command)` and
// `llvm::cl::cat(ampc::cli::category())`.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_CLI_COMMAND_H
#define AMPC_COMPILER_CLI_COMMAND_H

#include "llvm/Support/CommandLine.h"

namespace ampc::cli {

// The option category every ampc option belongs to; others are hidden.
llvm::cl::OptionCategory &category();

class Command : public llvm::cl::SubCommand {
public:
  using RunFn = int (*)();
  Command(llvm::StringRef name, llvm::StringRef description, RunFn run);
  int run() const { return runFn(); }

private:
  RunFn runFn;
};

// |flag| where the command line gives it, else |fallback|: a default that
// depends on other options (--pad-classes: on for --target=cuda).
inline bool givenOr(const llvm::cl::opt<bool> &flag, bool fallback) {
  return flag.getNumOccurrences() ? bool(flag) : fallback;
}

// Parses the command line and runs the chosen command; returns the exit code.
int runMain(int argc, char **argv);

} // namespace ampc::cli

#endif
