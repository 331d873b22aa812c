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
      "graph.gelu_backward", "graph.broadcast_to",
      "graph.maximum", "graph.minimum", "graph.silu", "graph.abs", "graph.erf",
      "graph.sin", "graph.cos", "graph.reciprocal", "graph.leaky_relu",
      "graph.softplus", "graph.clamp", "graph.silu_backward",
      "graph.leaky_relu_backward", "graph.softplus_backward",
      "graph.clamp_backward", "graph.maximum_backward", "graph.where",
      "graph.masked_fill", "graph.elu", "graph.elu_backward"};
  return llvm::is_contained(names, op->getName().getStringRef());
}

// Runs after the region's own checks (SingleBlockImplicitTerminator: the
// body ends in a kernel.yield) and the body ops' verifiers.
LogicalResult FusedElementwiseOp::verifyRegions() {
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
  // Inputs are read with numpy broadcasting: right-aligned, each dimension
  // the loop's or 1 (the emitters index them so).
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(in.getType()).getShape();
    bool broadcasts = s.size() <= shape.size();
    for (size_t d = 1; broadcasts && d <= s.size(); ++d)
      broadcasts =
          s[s.size() - d] == 1 || s[s.size() - d] == shape[shape.size() - d];
    if (!broadcasts)
      return emitOpError() << "input " << i << " (" << in.getType()
                           << ") does not broadcast to the loop's shape";
  }
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

namespace {

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
bool isHalf(Type t) { return t.isF16() || t.isBF16(); }
bool isFloat(Type t) { return t.isF32() || isHalf(t); }

// |v| is absent or a [d] float tensor.
LogicalResult checkAffine(Operation *op, StringRef what, Value v, int64_t d) {
  if (!v)
    return success();
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() != 1 || t.getDimSize(0) != d || !isFloat(t.getElementType()))
    return op->emitOpError() << what << " must be a [" << d
                             << "] float tensor, got " << t;
  return success();
}

// Every value in |vs| is a float tensor of |shape|.
LogicalResult checkRows(Operation *op, ArrayRef<int64_t> shape,
                        ArrayRef<std::pair<StringRef, Value>> vs) {
  for (auto [what, v] : vs) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getShape() != shape || !isFloat(t.getElementType()))
      return op->emitOpError() << what << " must be a float tensor of the "
                               << "input's shape, got " << t;
  }
  return success();
}

// The row operands and results every add-norm form has: lhs, rhs and the
// result of lhs's shape, and their sum, which is what the next residual add
// and the backward read: FP32, so normalising it after the store changes no
// bit.
LogicalResult checkAddRows(Operation *op, ArrayRef<int64_t> shape, Value lhs,
                           Value rhs, Value sum, Value result) {
  if (failed(checkRows(op, shape,
                       {{"lhs", lhs}, {"rhs", rhs}, {"sum", sum},
                        {"result", result}})))
    return failure();
  if (!elementOf(sum).isF32())
    return op->emitOpError() << "sum must be f32";
  return success();
}

// The row operands and results every norm-backward-add form has: x, g, acc
// and the f32 dx_sum of x's shape, and the optional half copy of dx_sum.
LogicalResult checkBackwardAddRows(Operation *op, ArrayRef<int64_t> shape,
                                   Value x, Value g, Value acc, Value dxSum,
                                   Value dxHalf) {
  if (failed(checkRows(op, shape,
                       {{"x", x}, {"g", g}, {"acc", acc}, {"dx_sum", dxSum}})))
    return failure();
  if (!elementOf(dxSum).isF32())
    return op->emitOpError() << "dx_sum must be f32";
  if (dxHalf) {
    if (failed(checkRows(op, shape, {{"dx_half", dxHalf}})))
      return failure();
    if (!isHalf(elementOf(dxHalf)))
      return op->emitOpError() << "dx_half must be f16 or bf16";
  }
  return success();
}

} // namespace

LogicalResult AddLayerNormOp::verify() {
  auto shape = cast<RankedTensorType>(getLhs().getType()).getShape();
  if (shape.empty())
    return emitOpError() << "needs operands of rank >= 1";
  if (failed(checkAddRows(*this, shape, getLhs(), getRhs(), getSum(),
                          getResult())))
    return failure();
  if (getBias() && !getWeight())
    return emitOpError() << "with a bias needs a weight";
  if (failed(checkAffine(*this, "weight", getWeight(), shape.back())) ||
      failed(checkAffine(*this, "bias", getBias(), shape.back())))
    return failure();
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "eps must be > 0";
  return success();
}

LogicalResult LayerNormBackwardAddOp::verify() {
  auto shape = cast<RankedTensorType>(getX().getType()).getShape();
  if (shape.empty())
    return emitOpError() << "needs operands of rank >= 1";
  if (failed(checkBackwardAddRows(*this, shape, getX(), getG(), getAcc(),
                                  getDxSum(), getDxHalf())))
    return failure();
  int64_t d = shape.back();
  if (failed(checkAffine(*this, "weight", getWeight(), d)) ||
      failed(checkAffine(*this, "dweight", getDweight(), d)) ||
      failed(checkAffine(*this, "dbias", getDbias(), d)))
    return failure();
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "eps must be > 0";
  return success();
}

// The add and rms_norm / rms_norm_backward forms: the same operand checks,
// no bias, an optional eps.
LogicalResult AddRmsNormOp::verify() {
  auto shape = cast<RankedTensorType>(getLhs().getType()).getShape();
  if (shape.empty())
    return emitOpError() << "needs operands of rank >= 1";
  if (failed(checkAddRows(*this, shape, getLhs(), getRhs(), getSum(),
                          getResult())))
    return failure();
  if (failed(checkAffine(*this, "weight", getWeight(), shape.back())))
    return failure();
  if (getEps() && !(getEps()->convertToDouble() > 0))
    return emitOpError() << "eps must be > 0";
  return success();
}

LogicalResult RmsNormBackwardAddOp::verify() {
  auto shape = cast<RankedTensorType>(getX().getType()).getShape();
  if (shape.empty())
    return emitOpError() << "needs operands of rank >= 1";
  if (failed(checkBackwardAddRows(*this, shape, getX(), getG(), getAcc(),
                                  getDxSum(), getDxHalf())))
    return failure();
  if (failed(checkAffine(*this, "weight", getWeight(), shape.back())) ||
      failed(checkAffine(*this, "dweight", getDweight(), shape.back())))
    return failure();
  if (getEps() && !(getEps()->convertToDouble() > 0))
    return emitOpError() << "eps must be > 0";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Kernel/KernelOps.cpp.inc"
