//===- EmitGradResults.h - Where each gradient leaves the step --*- C++ -*-===//
//
// Both targets print forwardBackward()'s results the same way: every
// gradient's `storeGrad(i, ptr, micro);` (copy on micro-batch 0 unless
// written in place, accumulation after) and `gradReady(i);` right after the
// op of the body after which that gradient is final and no longer read
// (passes/GradReady.h: its producer, or its last reader, through aliases).
// From there the data-parallel runtime may all-reduce it while the backward
// goes on (Model::setGradReadyHook); an all-reduce runs in place, so no
// later op may read the buffer. The loss (and a gradient that no op
// produces) follows the body.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_COMMON_EMITGRADRESULTS_H
#define AMPC_COMPILER_TARGETS_COMMON_EMITGRADRESULTS_H

#include "compiler/targets/common/EmitSupport.h"

#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace ampc::emit {

// Prints @grad's body with |emitBody| (which walks it with |env|), the
// gradients placed as above, then |resultsComment| (a // line), the loss
// through |printLoss| and any gradient not placed. Checks each gradient's
// element count against its parameter.
mlir::LogicalResult
emitGradBodyAndResults(const Program &p, BlockEnv &env,
                       mlir::raw_indented_ostream &os,
                       llvm::function_ref<mlir::LogicalResult()> emitBody,
                       llvm::StringRef resultsComment,
                       llvm::function_ref<void(mlir::Value)> printLoss);

} // namespace ampc::emit

#endif
