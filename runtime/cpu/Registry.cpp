//===- Registry.cpp - Op name -> kernel, attributes, tensor refs ----------===//
#include "runtime/cpu/Common.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace ampc::cpu {

namespace {

struct Entry {
  std::string_view name;
  Kernel kernel;
};

constexpr Entry kEntries[] = {
#define AMPC_CPU_OP(name, function) {name, &function},
#include "runtime/cpu/Ops.def"
};

constexpr auto kNames = [] {
  std::array<std::string_view, std::size(kEntries)> names{};
  for (size_t i = 0; i < names.size(); ++i)
    names[i] = kEntries[i].name;
  return names;
}();

[[noreturn]] void badAttr(std::string_view name, const char *what) {
  throw std::invalid_argument("attribute '" + std::string(name) + "' " + what);
}

} // namespace

Kernel lookup(std::string_view opName) {
  if (!opName.starts_with("graph."))
    for (const Entry &e : kEntries)
      if (e.name.substr(6) == opName)
        return e.kernel;
  for (const Entry &e : kEntries)
    if (e.name == opName)
      return e.kernel;
  return nullptr;
}

std::span<const std::string_view> registeredOps() { return kNames; }

TensorRef makeRef(void *data, DType dtype, std::span<const int64_t> shape) {
  if (shape.size() > size_t(kMaxRank))
    throw std::invalid_argument("makeRef: rank above 8");
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.rank = int(shape.size());
  std::copy(shape.begin(), shape.end(), t.shape);
  return t;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  }
  return 0;
}

Attrs::Attrs(std::initializer_list<std::pair<std::string_view, Attr>> init) {
  for (const auto &[name, value] : init)
    set(name, value);
}

Attrs &Attrs::set(std::string_view name, Attr value) {
  for (auto &e : entries_)
    if (e.first == name) {
      e.second = std::move(value);
      return *this;
    }
  entries_.emplace_back(std::string(name), std::move(value));
  return *this;
}

const Attr *Attrs::find(std::string_view name) const {
  for (const auto &e : entries_)
    if (e.first == name)
      return &e.second;
  return nullptr;
}

int64_t Attrs::getInt(std::string_view name) const {
  const Attr *a = find(name);
  if (!a)
    badAttr(name, "is required");
  if (auto *i = std::get_if<int64_t>(&a->value()))
    return *i;
  if (auto *b = std::get_if<bool>(&a->value()))
    return *b;
  badAttr(name, "is not an integer");
}

int64_t Attrs::getInt(std::string_view name, int64_t dflt) const {
  return has(name) ? getInt(name) : dflt;
}

double Attrs::getFloat(std::string_view name) const {
  const Attr *a = find(name);
  if (!a)
    badAttr(name, "is required");
  if (auto *d = std::get_if<double>(&a->value()))
    return *d;
  if (auto *i = std::get_if<int64_t>(&a->value()))
    return double(*i);
  badAttr(name, "is not a number");
}

double Attrs::getFloat(std::string_view name, double dflt) const {
  return has(name) ? getFloat(name) : dflt;
}

std::vector<int64_t> Attrs::getInts(std::string_view name) const {
  const Attr *a = find(name);
  if (!a)
    badAttr(name, "is required");
  if (auto *v = std::get_if<std::vector<int64_t>>(&a->value()))
    return *v;
  badAttr(name, "is not an integer array");
}

std::vector<int64_t> Attrs::getInts(std::string_view name,
                                    std::vector<int64_t> dflt) const {
  return has(name) ? getInts(name) : std::move(dflt);
}

std::string Attrs::getString(std::string_view name, std::string dflt) const {
  const Attr *a = find(name);
  if (!a)
    return dflt;
  if (auto *s = std::get_if<std::string>(&a->value()))
    return *s;
  badAttr(name, "is not a string");
}

bool Attrs::getBool(std::string_view name, bool dflt) const {
  const Attr *a = find(name);
  if (!a)
    return dflt;
  if (auto *b = std::get_if<bool>(&a->value()))
    return *b;
  return true; // a unit attribute carries no value
}

} // namespace ampc::cpu
