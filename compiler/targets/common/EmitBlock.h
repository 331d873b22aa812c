//===- EmitBlock.h - Function bodies, shared by the targets -----*- C++ -*-===//
//
// One statement group per op, each headed by the IR it comes from. The walk,
// the result pointers (arena or alias), library calls and the scalar code
// of fused elementwise regions are the same on every target; a target says
// how a fused region runs (a loop, a __global__ kernel) and where constants
// come from.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_COMMON_EMITBLOCK_H
#define AMPC_COMPILER_TARGETS_COMMON_EMITBLOCK_H

#include "compiler/targets/common/EmitSupport.h"
#include "compiler/targets/common/TargetSyntax.h"
#include "dialects/Kernel/KernelOps.h"

#include "mlir/Support/IndentedOstream.h"

namespace ampc::emit {

class BlockEmitter {
public:
  BlockEmitter(const TargetSyntax &t, BlockEnv &env,
               mlir::raw_indented_ostream &os)
      : t(t), env(env), os(os) {}
  virtual ~BlockEmitter() = default;

  // Prints the ops of |block| (a function body or the graph.model body).
  // Block arguments / graph.input / graph.param values must already be
  // named in the env; terminators are left to the caller.
  mlir::LogicalResult emitBlock(mlir::Block &block);

protected:
  virtual mlir::LogicalResult emitFused(kernel::FusedElementwiseOp op) = 0;
  virtual mlir::LogicalResult emitConstant(graph::ConstantOp op) = 0;

  // The statements of one element of |op| at loop index `i`: operand k read
  // as float from inputs[k][index[k]], each inner op rounded to its type,
  // results stored to results[k][i].
  mlir::LogicalResult emitFusedBody(kernel::FusedElementwiseOp op,
                                    llvm::ArrayRef<std::string> inputs,
                                    llvm::ArrayRef<std::string> index,
                                    llvm::ArrayRef<std::string> results,
                                    mlir::raw_indented_ostream &body);

  // The scalar expression of one inner op of a fused region over operand
  // expressions |x|; failure where the target has none.
  mlir::FailureOr<std::string> formula(mlir::Operation *op,
                                       llvm::ArrayRef<std::string> x);

  const TargetSyntax &t;
  BlockEnv &env;
  mlir::raw_indented_ostream &os;

private:
  mlir::LogicalResult declareResults(mlir::Operation *op);
  mlir::LogicalResult emitLibraryCall(mlir::Operation *op);
};

} // namespace ampc::emit

#endif
