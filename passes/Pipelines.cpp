//===- Pipelines.cpp - Named pass pipelines --------------------------------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"

void ampc::registerPipelines() {}
