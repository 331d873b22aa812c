//===- TrainOps.cpp - Training-step ops: type inference, verifiers ---------===//
#include "dialects/Train/TrainOps.h"
#include "runtime/HyperRules.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstdint>
#include <cstdio>
#include <type_traits>

using namespace mlir;
using namespace ampc::train;

#include "dialects/Train/TrainDialect.cpp.inc"

FailureOr<bool> ampc::train::parseBoolParameter(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected true or false");
}

#define GET_ATTRDEF_CLASSES
#include "dialects/Train/TrainAttrs.cpp.inc"

void TrainDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Train/TrainAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Train/TrainOps.cpp.inc"
      >();
}

LogicalResult TrainDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == kConfigAttr && !isa<ConfigAttr>(attr.getValue()))
    return op->emitError() << kConfigAttr << " must be a #train.config";
  return success();
}

// Whether |name| is a runtime hyper-parameter (runtime/HyperParams.def).
static bool isHyperName(StringRef name) {
#define AMPC_HYPER(n, field, type, dflt, help)                                 \
  if (name == #n)                                                              \
    return true;
#include "runtime/HyperParams.def"
  return false;
}

// The element type a hyper-parameter's default has in the IR.
static bool isF32(Attribute a) {
  auto f = dyn_cast<FloatAttr>(a);
  return f && f.getType().isF32();
}
static bool isI32(Attribute a) {
  auto i = dyn_cast<IntegerAttr>(a);
  return i && i.getType().isInteger(32);
}

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef amp, StringRef optimizer,
                                 StringRef lossScale, bool nesterov,
                                 bool clipNorm, bool clipValue,
                                 int64_t accumSteps, DictionaryAttr defaults) {
  if (!llvm::is_contained({"off", "fp16", "bf16"}, amp))
    return emitError() << "amp must be \"off\", \"fp16\" or \"bf16\"";
  if (!llvm::is_contained({"sgd", "adam", "adamw"}, optimizer))
    return emitError() << "optimizer must be \"sgd\", \"adam\" or \"adamw\"";
  if (!llvm::is_contained({"dynamic", "static", "none"}, lossScale))
    return emitError()
           << "loss_scale must be \"dynamic\", \"static\" or \"none\"";
  if (nesterov && optimizer != "sgd")
    return emitError() << "nesterov needs optimizer \"sgd\"";
  if (accumSteps < 1)
    return emitError() << "accum_steps must be >= 1";
  if (!defaults)
    return emitError() << "needs defaults (a dictionary)";
  // The keys are the runtime's hyper-parameters (HyperParams.def).
  for (NamedAttribute d : defaults) {
    StringRef key = d.getName().getValue();
    bool known = false, typed = false;
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  if (key == #name) {                                                          \
    known = true;                                                              \
    typed = std::is_same_v<type, float> ? isF32(d.getValue())                  \
                                        : isI32(d.getValue());                 \
  }
#include "runtime/HyperParams.def"
    if (!known)
      return emitError() << "defaults: '" << key
                         << "' is not a runtime hyper-parameter";
    if (!typed)
      return emitError() << "defaults: '" << key
                         << "' must be an f32 or i32 like the runtime's";
    // The binary checks its compiled-in defaults with the same rules at
    // start (checkHyper): a module it would refuse is invalid here.
    double v = isF32(d.getValue())
                   ? cast<FloatAttr>(d.getValue()).getValueAsDouble()
                   : double(cast<IntegerAttr>(d.getValue()).getInt());
    if (std::string problem = ampc::rt::hyperRule(key, v); !problem.empty()) {
      char got[32];
      std::snprintf(got, sizeof(got), "%.9g", v);
      return emitError() << "defaults: '" << key << "' " << problem
                         << " (got " << got << ")";
    }
  }
  (void)clipNorm;
  (void)clipValue;
  return success();
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

ConfigAttr FusedEpilogueOp::getConfig() {
  Operation *fn = (*this)->getParentOp();
  return fn ? fn->getAttrOfType<ConfigAttr>(kConfigAttr) : nullptr;
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
  if (!getConfig())
    return emitOpError() << "needs a " << kConfigAttr
                         << " on its enclosing function";
  StringRef opt = getOptimizer();
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
  for (Attribute name : getHyperNames())
    if (!isHyperName(cast<StringAttr>(name).getValue()))
      return emitOpError() << "hyperparameter " << name
                           << " is not a runtime hyper-parameter";
  if (getClipNorm() != bool(getHyperValue("clip_norm")) ||
      getClipValue() != bool(getHyperValue("clip_value")))
    return emitOpError() << "takes the clip_norm / clip_value hyperparameter "
                            "exactly when its train.config clips";
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
