//===- GraphDialect.cpp - Graph dialect registration ----------------------===//
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"

using namespace mlir;
using namespace ampc::graph;

#include "dialects/Graph/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Graph/GraphOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Graph/GraphGradOps.cpp.inc"
      >();
  registerAttributes();
}
