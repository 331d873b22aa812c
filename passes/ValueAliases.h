//===- ValueAliases.h - Results that are their operand, not a buffer -----===//
//
// A reshape's result, a slice that keeps a leading part of its operand (the
// first rows, every later dimension whole, in order: the operand's first
// bytes), and in the model's own block (the evaluation forward, where
// dropout is off) a dropout's, are their operand 0: kernel-plan-memory
// gives them no buffer and keeps the operand's alive through them, and the
// emitters and the cost report bind them to the operand's pointer. All of
// them ask here, so the plan, the printed code and the report cannot
// disagree.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_VALUEALIASES_H
#define AMPC_PASSES_VALUEALIASES_H

#include "dialects/Graph/GraphOps.h"

namespace ampc {

// The part a graph.slice (or the graph.slice_backward of one) names of the
// whole tensor |full| is |full|'s first rows: starts 0, unit strides, no
// permutation, and every dimension after the first entire.
template <typename SliceLike>
bool isLeadingRows(SliceLike op, mlir::Type full) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(full);
  if (!type || type.getRank() == 0 || !type.hasStaticShape())
    return false;
  llvm::ArrayRef<int64_t> starts = op.getStarts(), limits = op.getLimits();
  if (int64_t(starts.size()) != type.getRank() ||
      int64_t(limits.size()) != type.getRank())
    return false;
  if (auto strides = op.getStrides())
    for (int64_t s : *strides)
      if (s != 1)
        return false;
  if (auto perm = op.getPerm())
    for (auto [i, p] : llvm::enumerate(*perm))
      if (p != int64_t(i))
        return false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (starts[d] != 0 || (d > 0 && limits[d] != type.getDimSize(d)))
      return false;
  return true;
}

// |evaluation|: |op| is in the model's own block (the emitters' non-training
// forward), not in a training-step function.
inline bool aliasesOperand(mlir::Operation *op, bool evaluation) {
  if (auto slice = mlir::dyn_cast<graph::SliceOp>(op))
    return isLeadingRows(slice, slice.getInput().getType());
  return mlir::isa<graph::ReshapeOp>(op) ||
         (evaluation && mlir::isa<graph::DropoutOp>(op));
}

} // namespace ampc

#endif
