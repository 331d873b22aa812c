//===- KernelOps.cpp - Kernel-level ops -----------------------------------===//
#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace ampc::kernel;

#include "dialects/Kernel/KernelDialect.cpp.inc"

void KernelDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Kernel/KernelOps.cpp.inc"
      >();
}

bool ampc::kernel::isFusableElementwise(Operation *op) {
  // By name: the backward ops live in the graph dialect too, and the set of
  // scalar formulas the emitters know is exactly this list.
  static const llvm::StringRef names[] = {
      "graph.add",   "graph.sub",           "graph.mul",           "graph.div",
      "graph.neg",   "graph.relu",          "graph.tanh",          "graph.sigmoid",
      "graph.exp",   "graph.log",           "graph.sqrt",          "graph.rsqrt",
      "graph.gelu",  "graph.pow",           "graph.cast",          "graph.relu_backward",
      "graph.gelu_backward", "graph.broadcast_to"};
  return llvm::is_contained(names, op->getName().getStringRef());
}

LogicalResult FusedElementwiseOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "needs one region argument per input";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError() << "region argument types must match the inputs";
  if (getResults().empty())
    return emitOpError() << "needs at least one result";
  auto shape = cast<RankedTensorType>(getResults()[0].getType()).getShape();
  for (Value r : getResults())
    if (cast<RankedTensorType>(r.getType()).getShape() != shape)
      return emitOpError() << "results must share one shape";
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResults().getTypes())
    return emitOpError() << "yielded types must match the result types";
  for (Operation &op : body.without_terminator()) {
    if (!isFusableElementwise(&op))
      return op.emitOpError() << "is not an elementwise op a loop can fuse";
    for (Value r : op.getResults())
      if (cast<RankedTensorType>(r.getType()).getShape() != shape)
        return op.emitOpError() << "must produce the loop's shape";
  }
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Kernel/KernelOps.cpp.inc"
