//===- TrainOps.cpp - Training-step ops: type inference, verifiers ---------===//
#include "dialects/Train/TrainOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace ampc::train;

#include "dialects/Train/TrainDialect.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Train/TrainOps.cpp.inc"
      >();
}

static RankedTensorType scalarType(MLIRContext *context, Type element) {
  return RankedTensorType::get({}, element);
}

LogicalResult UnscaleOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  for (Value g : adaptor.getGrads())
    types.push_back(g.getType());
  types.push_back(scalarType(context, IntegerType::get(context, 1)));
  types.push_back(scalarType(context, Float32Type::get(context)));
  return success();
}

LogicalResult UnscaleOp::verify() {
  if (getGrads().empty())
    return emitOpError() << "needs at least one gradient";
  return success();
}

// Clipping keeps each gradient's type.
template <typename ClipOp>
static LogicalResult inferClip(typename ClipOp::Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  for (Value g : adaptor.getGrads())
    types.push_back(g.getType());
  return success();
}

LogicalResult ClipByNormOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location>,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferClip<ClipByNormOp>(adaptor, types);
}
LogicalResult ClipByValueOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location>,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return inferClip<ClipByValueOp>(adaptor, types);
}

// Clipping only makes sense on the unscale op's results (or their clipped
// successors): checking it here makes the epilogue order impossible to get
// wrong.
template <typename ClipOp> static LogicalResult verifyClip(ClipOp op) {
  if (op.getGrads().empty())
    return op.emitOpError() << "needs at least one gradient";
  for (Value g : op.getGrads()) {
    Operation *def = g.getDefiningOp();
    if (!def || !isa<UnscaleOp, ClipByNormOp, ClipByValueOp>(def))
      return op.emitOpError()
             << "clips unscaled gradients only: each operand must come from "
                "train.unscale or another clip op";
  }
  return success();
}
LogicalResult ClipByNormOp::verify() { return verifyClip(*this); }
LogicalResult ClipByValueOp::verify() { return verifyClip(*this); }

LogicalResult UpdateScaleOp::verify() {
  if (!llvm::is_contained({"dynamic", "static", "none"}, getMode()))
    return emitOpError() << "mode must be \"dynamic\", \"static\" or \"none\"";
  return success();
}

Value FusedEpilogueOp::getHyperValue(StringRef name) {
  for (auto [value, attr] : llvm::zip(getHyper(), getHyperNames()))
    if (cast<StringAttr>(attr).getValue() == name)
      return value;
  return nullptr;
}

LogicalResult FusedEpilogueOp::verify() {
  size_t n = getParams().size();
  if (n == 0)
    return emitOpError() << "needs at least one parameter";
  StringRef opt = getOptimizer();
  if (!llvm::is_contained({"sgd", "adam", "adamw"}, opt))
    return emitOpError() << "optimizer must be \"sgd\", \"adam\" or \"adamw\"";
  if (!llvm::is_contained({"dynamic", "static", "none"}, getLossScale()))
    return emitOpError()
           << "loss_scale must be \"dynamic\", \"static\" or \"none\"";
  size_t second = opt == "sgd" ? 0 : n;
  if (getGrads().size() != n || getMoments().size() != n ||
      getSecondMoments().size() != second)
    return emitOpError() << "needs one gradient and one moment per parameter"
                         << (second ? " and one second moment" : "")
                         << " (" << n << ")";
  for (size_t i = 0; i < n; ++i) {
    Type t = getParams()[i].getType();
    if (getGrads()[i].getType() != t || getMoments()[i].getType() != t ||
        (second && getSecondMoments()[i].getType() != t))
      return emitOpError() << "parameter " << i
                           << " has a gradient or moment of another type";
  }
  if (getHyper().size() != getHyperNames().size())
    return emitOpError() << "needs one name per hyperparameter";
  size_t expected = n + n + second + 7;
  if (getResults().size() != expected)
    return emitOpError() << "has " << getResults().size()
                         << " results, expected " << expected;
  for (size_t i = 0; i < n + n + second; ++i) {
    Type t = getParams()[i % n].getType();
    if (getResults()[i].getType() != t)
      return emitOpError() << "result " << i << " must have type " << t;
  }
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Train/TrainOps.cpp.inc"
