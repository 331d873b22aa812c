//===- GraphDesugar.cpp - Shape sugar and broadcasting matmuls to core ops -===//
//
// The rewrite itself lives beside the ops (dialects/Graph/GraphSugar.cpp) so
// the model loader runs the same code without a pass manager.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHDESUGAR
#include "passes/Passes.h.inc"
} // namespace ampc

namespace {
struct GraphDesugarPass : ampc::impl::GraphDesugarBase<GraphDesugarPass> {
  void runOnOperation() override { ampc::graph::desugar(getOperation()); }
};
} // namespace
