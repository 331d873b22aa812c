//===- GradFunctions.h - Each model's @<model>_grad -------------*- C++ -*-===//
//
// The passes that rewrite the training step's body (graph-autodiff built
// it) find it here: one per graph.model, when defined.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_GRADFUNCTIONS_H
#define AMPC_PASSES_GRADFUNCTIONS_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

namespace ampc {

// The @<model>_grad function of each graph.model in |module| that has a
// body (a declaration has none to rewrite).
inline llvm::SmallVector<mlir::func::FuncOp>
definedGradFunctions(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::func::FuncOp> fns;
  for (graph::ModelOp model : module.getOps<graph::ModelOp>())
    if (auto grad = module.lookupSymbol<mlir::func::FuncOp>(
            (model.getSymName() + "_grad").str());
        grad && !grad.isExternal())
      fns.push_back(grad);
  return fns;
}

} // namespace ampc

#endif
