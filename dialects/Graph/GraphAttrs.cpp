//===- GraphAttrs.cpp - Initializer attributes ----------------------------===//
#include "dialects/Graph/GraphAttrs.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include <charconv>
#include <cmath>

using namespace mlir;
using namespace ampc::graph;

void ampc::graph::printDouble(AsmPrinter &printer, double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  std::string s(buf, end);
  // The MLIR lexer needs a '.' before any exponent to see a float literal.
  if (s.find_first_of(".ni") == std::string::npos) {
    size_t e = s.find('e');
    if (e == std::string::npos)
      s += ".0";
    else
      s.insert(e, ".0");
  }
  printer << s;
}

#define GET_ATTRDEF_CLASSES
#include "dialects/Graph/GraphAttrs.cpp.inc"

bool ampc::graph::isInitializerAttr(Attribute attr) {
  return isa<ZerosInitAttr, OnesInitAttr, ConstantInitAttr, NormalInitAttr,
             UniformInitAttr, XavierUniformInitAttr, XavierNormalInitAttr,
             KaimingUniformInitAttr, KaimingNormalInitAttr,
             TruncNormalInitAttr>(attr);
}

LogicalResult NormalInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                     Real mean, Real std) {
  if (!(std > 0) || !std::isfinite(std) || !std::isfinite(mean))
    return emitError() << "normal initializer needs a finite std > 0";
  return success();
}

LogicalResult UniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      Real a, Real b) {
  if (!(a <= b) || !std::isfinite(a) || !std::isfinite(b))
    return emitError() << "uniform initializer needs finite a <= b";
  return success();
}

static LogicalResult verifyKaiming(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef mode, StringRef nonlinearity) {
  if (mode != "fan_in" && mode != "fan_out")
    return emitError() << "kaiming mode must be \"fan_in\" or \"fan_out\", got \""
                       << mode << "\"";
  if (!llvm::is_contained({"linear", "relu", "leaky_relu", "tanh", "sigmoid",
                           "conv2d", "selu"},
                          nonlinearity))
    return emitError() << "unknown nonlinearity \"" << nonlinearity
                       << "\" (expected linear, relu, leaky_relu, tanh, sigmoid, "
                          "conv2d or selu)";
  return success();
}

LogicalResult KaimingUniformInitAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, Real, StringRef mode,
    StringRef nonlinearity) {
  return verifyKaiming(emitError, mode, nonlinearity);
}

LogicalResult KaimingNormalInitAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, Real, StringRef mode,
    StringRef nonlinearity) {
  return verifyKaiming(emitError, mode, nonlinearity);
}

LogicalResult TruncNormalInitAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, Real mean, Real std,
    Real a, Real b) {
  if (!(std > 0) || !(a < b))
    return emitError() << "trunc_normal initializer needs std > 0 and a < b";
  return success();
}

void GraphDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Graph/GraphAttrs.cpp.inc"
      >();
}
