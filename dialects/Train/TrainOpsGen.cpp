//===- TrainOpsGen.cpp - ODS-generated definitions of the train ops -------===//
//
// MLIR's generated accessors, builders, parsers and printers, apart from the
// hand-written code (TrainOps.cpp) so that a sanitized build compiles them
// without instrumentation (ampc_generated_sources in CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "dialects/Train/TrainOps.h"

#include "mlir/IR/Builders.h"

#define GET_OP_CLASSES
#include "dialects/Train/TrainOps.cpp.inc"
