//===- EmitSupport.cpp - Names, types and literals for the C++ -------------===//
#include "compiler/targets/common/EmitSupport.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace ampc::emit;

static Type elementOf(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return type;
}

std::string ampc::emit::cppElementType(Type type) {
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

std::string ampc::emit::dtypeOf(Type type) {
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

std::string ampc::emit::identifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id[0]))
    id = "v" + id;
  return id;
}

std::string ampc::emit::doubleLiteral(double value) {
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

std::string ampc::emit::floatLiteral(float value) {
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

std::string ampc::emit::shapeList(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

int64_t ampc::emit::byteSize(Type type) {
  auto t = cast<RankedTensorType>(type);
  return t.getNumElements() *
         ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

std::string ampc::emit::kernelMember(StringRef opName) {
  opName.consume_front("graph.");
  return "k_" + identifier(opName) + "_";
}

std::string ampc::emit::className(StringRef model) {
  std::string name;
  bool upper = true;
  for (char c : model) {
    if (!llvm::isAlnum(c)) {
      upper = true;
      continue;
    }
    name += upper ? llvm::toUpper(c) : c;
    upper = false;
  }
  if (name.empty() || llvm::isDigit(name[0]))
    name = "M" + name;
  return name + "Model";
}

// Only printable ASCII goes into the C++ source: `"` and `\\` escaped,
// `?` too (no trigraph such as ??/ can form, whatever the -std), every
// other byte (control characters, UTF-8 sequences) as a three-digit octal
// escape, which, unlike \x, cannot run on into a following hex digit.
std::string ampc::emit::quoted(StringRef s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '?') {
      q += '\\';
      q += char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      q += char(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", unsigned(c));
      q += buf;
    }
  }
  return q + "\"";
}

std::string ampc::emit::commentText(StringRef s) {
  bool plain = !s.empty() && s.back() != '\\' &&
               llvm::all_of(s, [](char c) { return c >= 0x20 && c < 0x7f; });
  return plain ? s.str() : quoted(s);
}

std::string ampc::emit::elementLiteral(Attribute a, const std::string &type) {
  if (auto f = dyn_cast<FloatAttr>(a))
    return type + "(" + doubleLiteral(f.getValueAsDouble()) + ")";
  return type + "(" + std::to_string(cast<IntegerAttr>(a).getInt()) + ")";
}

// How the loop index |i| over |out| reads an operand of shape |in| that
// broadcasts to it (numpy rules).
std::string ampc::emit::broadcastIndex(ArrayRef<int64_t> in,
                                        ArrayRef<int64_t> out) {
  if (in == out)
    return "i";
  int64_t inCount = 1;
  for (int64_t d : in)
    inCount *= d;
  if (inCount == 1)
    return "0";
  size_t rank = out.size();
  SmallVector<int64_t> padded(rank - in.size(), 1);
  padded.append(in.begin(), in.end());
  // A trailing block (a bias): i modulo its size.
  size_t first = 0;
  while (padded[first] == 1)
    ++first;
  if (llvm::equal(ArrayRef(padded).drop_front(first),
                  out.drop_front(first)))
    return "i % " + std::to_string(inCount);
  // General: rebuild the operand's index dimension by dimension.
  std::string expr;
  int64_t outStride = 1, inStride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (padded[d] != 1) {
      std::string term = "(i / " + std::to_string(outStride) + " % " +
                         std::to_string(out[d]) + ")";
      if (inStride != 1)
        term += " * " + std::to_string(inStride);
      expr = expr.empty() ? term : term + " + " + expr;
    }
    outStride *= out[d];
    inStride *= padded[d];
  }
  return expr;
}

std::string AttrMembers::member(StringRef init) {
  auto [it, added] = byInit.insert({init.str(), std::string()});
  if (added)
    it->second = "attrs" + std::to_string(byInit.size() - 1) + "_";
  return it->second;
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
