//===- GradInPlace.h - Gradients the step writes into their buffers -------===//
//
// Micro-batch 0 of a training step writes these results of @<model>_grad
// straight into the runtime's gradient buffers (Model::grad; a half
// gradient, train-half-grads, into the model's halfGrad buffer), so that no
// copy follows (storeGrad skips a pointer to the buffer itself). Later
// micro-batches write them into the arena, at their planned offsets, and
// accumulate. The emitters and the cost report both ask here.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_GRADINPLACE_H
#define AMPC_PASSES_GRADINPLACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace ampc {

// The gradient results of |grad| (FP32, or half after train-half-grads)
// that have storage of their own in the memory plan (not a reshape's
// alias, not an argument or a constant) and are returned once.
llvm::DenseSet<mlir::Value> gradsWrittenInPlace(mlir::func::FuncOp grad);

} // namespace ampc

#endif
