//===- PipelineFlags.h - Training-pipeline options of the CLI ---*- C++ -*-===//
//
// `ampc compile` builds the training step and `ampc cost` prices the same
// step, so the options that shape it (AMP, optimizer, scaler, clipping and
// every pass toggle) are declared once, in PipelineFlags.cpp, and belong to
// both commands: same names, same help, same defaults.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_CLI_PIPELINEFLAGS_H
#define AMPC_COMPILER_CLI_PIPELINEFLAGS_H

#include "compiler/cli/Command.h"

namespace ampc {
struct TrainPipelineOptions;
} // namespace ampc

namespace ampc::cli {

// The two commands that share the pipeline options. Constructed on first use,
// so options in any file can name them during static initialisation.
Command &compileCommand();
Command &costCommand();

// Copies the pipeline options of the command line into |options|. |cuda|
// picks the defaults that depend on the target: --pad-classes and
// --half-grads are on for CUDA, and attention's statistics are saved only
// there (only the CUDA library reads them).
void applyPipelineFlags(TrainPipelineOptions &options, bool cuda);

} // namespace ampc::cli

#endif // AMPC_COMPILER_CLI_PIPELINEFLAGS_H
