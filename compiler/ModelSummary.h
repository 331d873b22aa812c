//===- ModelSummary.h - One-screen summary of a model -----------*- C++ -*-===//
#ifndef AMPC_COMPILER_MODELSUMMARY_H
#define AMPC_COMPILER_MODELSUMMARY_H

#include "dialects/Graph/GraphOps.h"

namespace ampc {
// Prints inputs, parameters (shape, count, initializer), the total parameter
// count, the outputs and a histogram of ops.
void printModelSummary(graph::ModelOp model, llvm::raw_ostream &os);
} // namespace ampc

#endif
