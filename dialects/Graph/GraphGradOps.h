//===- GraphGradOps.h - Backward-only ops of the Graph dialect --*- C++ -*-===//
//
// Include "dialects/Graph/GraphOps.h" rather than this file: it declares
// every op of the dialect, these included.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHGRADOPS_H
#define AMPC_DIALECTS_GRAPH_GRAPHGRADOPS_H

// Declares the base traits (PrecisionPin); includes this file back at its
// end, which the include guard makes a no-op.
#include "dialects/Graph/GraphOps.h"

#define GET_OP_CLASSES
#include "dialects/Graph/GraphGradOps.h.inc"

#endif
