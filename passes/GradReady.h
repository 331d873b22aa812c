//===- GradReady.h - Where a gradient of the step is final ---*- C++ -*-===//
//
// The op of @<model>_grad's body after which a gradient result is final
// and no longer read: its producer, or its last reader other than the
// terminator, following the aliases of passes/ValueAliases.h. The emitters
// print the gradient's storeGrad and gradReady there (the data-parallel
// all-reduce may start from it, in place, so nothing later may read the
// buffer), and the cost report puts the hand-over and the bucket's start
// at the same point.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_GRADREADY_H
#define AMPC_PASSES_GRADREADY_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"

namespace ampc {

// Null when no op of |block| produces or reads |v|.
mlir::Operation *lastTouch(mlir::Value v, mlir::Block &block);

} // namespace ampc

#endif
