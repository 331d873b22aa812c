//===- ValueAliases.h - Results that are their operand, not a buffer -----===//
//
// A reshape's result, and in the model's own block (the evaluation forward,
// where dropout is off) a dropout's, are their operand 0: kernel-plan-memory
// gives them no buffer and keeps the operand's alive through them, and the
// emitters bind them to the operand's pointer. All of them ask here, so the
// plan and the printed code cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_VALUEALIASES_H
#define AMPC_PASSES_VALUEALIASES_H

#include "dialects/Graph/GraphOps.h"

namespace ampc {

// |evaluation|: |op| is in the model's own block (the emitters' non-training
// forward), not in a training-step function.
inline bool aliasesOperand(mlir::Operation *op, bool evaluation) {
  return mlir::isa<graph::ReshapeOp>(op) ||
         (evaluation && mlir::isa<graph::DropoutOp>(op));
}

} // namespace ampc

#endif
