//===- Abi.cpp - Tensor refs, attributes, the op list ---------------------===//
#include "runtime/kernels/Abi.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace ampc::kernels {

namespace {

constexpr std::string_view kNames[] = {
#define AMPC_KERNEL_OP(name, function) name,
#include "runtime/kernels/Ops.def"
};

[[noreturn]] void badAttr(std::string_view name, const char *what) {
  throw std::invalid_argument("attribute '" + std::string(name) + "' " + what);
}

} // namespace

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

} // namespace ampc::kernels
