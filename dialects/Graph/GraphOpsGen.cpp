//===- GraphOpsGen.cpp - ODS-generated definitions of the graph ops -------===//
//
// MLIR's generated accessors, builders, parsers and printers, apart from the
// hand-written code (GraphOps.cpp, GraphShapes.cpp, ...) so that a sanitized
// build compiles them without instrumentation (ampc_generated_sources in
// CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.cpp.inc"
