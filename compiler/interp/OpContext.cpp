//===- OpContext.cpp - Generic attribute access for kernels ----------------===//
#include "compiler/interp/Kernel.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace ampc::interp;

int64_t OpContext::getInt(StringRef name, int64_t dflt) const {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getValue().getSExtValue();
  return dflt;
}

std::optional<double> OpContext::getOptionalFloat(StringRef name) const {
  Attribute a = op->getAttr(name);
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return double(i.getValue().getSExtValue());
  return std::nullopt;
}

double OpContext::getFloat(StringRef name, double dflt) const {
  return getOptionalFloat(name).value_or(dflt);
}

std::string OpContext::getString(StringRef name, StringRef dflt) const {
  if (auto a = op->getAttrOfType<StringAttr>(name))
    return a.str();
  return dflt.str();
}

bool OpContext::getFlag(StringRef name) const {
  Attribute a = op->getAttr(name);
  if (auto b = dyn_cast_or_null<BoolAttr>(a))
    return b.getValue();
  return a && isa<UnitAttr>(a);
}

std::optional<std::vector<int64_t>>
OpContext::getOptionalInts(StringRef name) const {
  Attribute a = op->getAttr(name);
  if (auto d = dyn_cast_or_null<DenseI64ArrayAttr>(a))
    return std::vector<int64_t>(d.asArrayRef().begin(), d.asArrayRef().end());
  if (auto arr = dyn_cast_or_null<ArrayAttr>(a)) {
    std::vector<int64_t> v;
    for (Attribute e : arr)
      if (auto i = dyn_cast<IntegerAttr>(e))
        v.push_back(i.getValue().getSExtValue());
    return v;
  }
  return std::nullopt;
}

std::vector<int64_t> OpContext::getInts(StringRef name,
                                        std::vector<int64_t> dflt) const {
  return getOptionalInts(name).value_or(std::move(dflt));
}

unsigned OpContext::getNumResults() const { return op->getNumResults(); }

Shape OpContext::resultShape(unsigned k) const {
  return shapeOf(op->getResult(k).getType());
}

ElemType OpContext::resultType(unsigned k) const {
  return elemTypeOf(op->getResult(k).getType());
}

InFlightDiagnostic OpContext::error() const { return op->emitError(); }
