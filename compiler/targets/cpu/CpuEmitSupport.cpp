//===- CpuEmitSupport.cpp - Names, types and literals for the C++ ----------===//
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace ampc::cpu_emit;

static Type elementOf(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return type;
}

std::string ampc::cpu_emit::cppElementType(Type type) {
  Type e = elementOf(type);
  if (e.isF32())
    return "float";
  if (e.isF16())
    return "half";
  if (e.isBF16())
    return "bf16";
  if (e.isInteger(1))
    return "bool";
  if (e.isInteger(32))
    return "int32_t";
  if (e.isInteger(64))
    return "int64_t";
  return "<unsupported>";
}

std::string ampc::cpu_emit::dtypeOf(Type type) {
  Type e = elementOf(type);
  if (e.isF16())
    return "DType::F16";
  if (e.isBF16())
    return "DType::BF16";
  if (e.isInteger(32))
    return "DType::I32";
  if (e.isInteger(64))
    return "DType::I64";
  return "DType::F32";
}

std::string ampc::cpu_emit::identifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id[0]))
    id = "v" + id;
  return id;
}

std::string ampc::cpu_emit::doubleLiteral(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  std::string s;
  for (int digits = 1; digits <= 17; ++digits) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.*g", digits, value);
    s = buf;
    if (std::strtod(s.c_str(), nullptr) == value)
      break;
  }
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

std::string ampc::cpu_emit::floatLiteral(float value) {
  if (std::isnan(value) || std::isinf(value))
    return "float(" + doubleLiteral(value) + ")";
  std::string s;
  for (int digits = 1; digits <= 9; ++digits) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.*g", digits, double(value));
    s = buf;
    if (std::strtof(s.c_str(), nullptr) == value)
      break;
  }
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string ampc::cpu_emit::shapeList(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

int64_t ampc::cpu_emit::byteSize(Type type) {
  auto t = cast<RankedTensorType>(type);
  return t.getNumElements() *
         ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

std::string ampc::cpu_emit::kernelMember(StringRef opName) {
  opName.consume_front("graph.");
  return "k_" + identifier(opName) + "_";
}

std::string BlockEnv::fresh(StringRef hint) {
  std::string base = identifier(hint), name = base;
  for (int i = 1; used.contains(name); ++i)
    name = base + "_" + std::to_string(i);
  used.insert(name);
  return name;
}

const std::string &BlockEnv::operator[](Value v) const {
  auto it = names.find(v);
  assert(it != names.end() && "value without a C++ name");
  return it->second;
}

std::string BlockEnv::ssaName(Value v) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  v.printAsOperand(os, *asmState);
  return s;
}
