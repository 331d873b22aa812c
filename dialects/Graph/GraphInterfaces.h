//===- GraphInterfaces.h - Op interfaces of the Graph dialect ---*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHINTERFACES_H
#define AMPC_DIALECTS_GRAPH_GRAPHINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include "dialects/Graph/GraphInterfaces.h.inc"

#endif
