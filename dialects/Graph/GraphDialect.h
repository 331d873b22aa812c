//===- GraphDialect.h - The Graph dialect -----------------------*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define AMPC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/GraphDialect.h.inc"

#endif
