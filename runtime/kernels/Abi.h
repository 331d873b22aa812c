//===- Abi.h - The kernel libraries' shared ABI -----------------*- C++ -*-===//
//
// What runtime/cpu and runtime/cuda have in common, so neither library
// depends on the other: the tensor reference and attribute types of every
// kernel call, and the op list (runtime/kernels/Ops.def). Each library adds
// its own Kernel signature and lookup (runtime/cpu/Kernels.h,
// runtime/cuda/Kernels.h, which re-export these names as ampc::cpu::... and
// ampc::cuda::...). Plain host C++: nvcc-compiled files include it too.
//
// Operand conventions: operands come in ODS order. An absent optional operand
// is either left off the end of `in` or passed as a TensorRef whose data is
// null (needed when a later operand is present: layer_norm x, -, bias).
// A result whose data is null is not computed (unused backward results).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_ABI_H
#define AMPC_RUNTIME_KERNELS_ABI_H

#include "runtime/Model.h"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ampc::kernels {

using rt::DType;

inline constexpr int kMaxRank = 8;

// A dense row-major tensor the caller owns. An aggregate, so generated code
// can write TensorRef{ptr, DType::F16, 2, {4, 8}}.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  int rank = 0;
  int64_t shape[kMaxRank] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= shape[i];
    return n;
  }
  std::span<const int64_t> dims() const { return {shape, size_t(rank)}; }
};

// Builds a TensorRef from a shape list (tests, hand-written callers).
TensorRef makeRef(void *data, DType dtype, std::span<const int64_t> shape);
inline TensorRef makeRef(void *data, DType dtype,
                         std::initializer_list<int64_t> shape) {
  return makeRef(data, dtype, std::span<const int64_t>(shape.begin(), shape.size()));
}

// Bytes per element of |dtype| (inline: runtime/data uses it without
// linking the kernel libraries).
constexpr size_t dtypeSize(DType dtype) {
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

// torch.finfo(dtype).eps of a float type: rms_norm's eps when the model
// gives none (torch.nn.RMSNorm's default, taken on the type it runs in).
constexpr double machineEpsilon(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 0x1p-10;
  case DType::BF16:
    return 0x1p-7;
  default:
    return 0x1p-23;
  }
}

// One attribute value: bool (also UnitAttr), int64, double, string or an
// int64 array (DenseI64ArrayAttr).
class Attr {
public:
  using Value = std::variant<bool, int64_t, double, std::string,
                             std::vector<int64_t>>;
  Attr(bool v) : v_(v) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Attr(T v) : v_(int64_t(v)) {}
  template <std::floating_point T> Attr(T v) : v_(double(v)) {}
  Attr(const char *v) : v_(std::string(v)) {}
  Attr(std::string v) : v_(std::move(v)) {}
  Attr(std::string_view v) : v_(std::string(v)) {}
  Attr(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attr(std::initializer_list<int64_t> v) : v_(std::vector<int64_t>(v)) {}

  const Value &value() const { return v_; }

private:
  Value v_;
};

// An op's attributes by their ODS names. Absent attributes take the defaults
// written in GraphOps.td / the backward-op table; kernels read them once,
// outside their loops.
//   Attrs{{"axis", int64_t(-1)}, {"eps", 1e-5}, {"perm", {1, 0}}}
class Attrs {
public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string_view, Attr>> init);

  Attrs &set(std::string_view name, Attr value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const Attr *find(std::string_view name) const;

  // Typed reads. The one-argument forms throw std::invalid_argument when
  // the attribute is missing; all throw when it has the wrong kind. Ints
  // read as floats; bools read as ints.
  int64_t getInt(std::string_view name) const;
  int64_t getInt(std::string_view name, int64_t dflt) const;
  double getFloat(std::string_view name) const;
  double getFloat(std::string_view name, double dflt) const;
  std::vector<int64_t> getInts(std::string_view name) const;
  std::vector<int64_t> getInts(std::string_view name,
                               std::vector<int64_t> dflt) const;
  std::string getString(std::string_view name, std::string dflt) const;
  // A UnitAttr: present (with any value but `false`) means true.
  bool getBool(std::string_view name, bool dflt = false) const;

private:
  std::vector<std::pair<std::string, Attr>> entries_;
};

// Every op name of runtime/kernels/Ops.def ("graph.add", ...), in its
// order; both libraries implement exactly these.
std::span<const std::string_view> registeredOps();

} // namespace ampc::kernels

#endif
