//===- Kernels.h - The CPU kernel library's ABI ------------------*- C++ -*-===//
//
// One generic entry point per graph op, looked up by op name; generated CPU
// code calls these for everything it does not print as a fused loop.
// Numerics (docs/ARCHITECTURE.md, "CPU kernel library"): inputs are widened
// to float, computed in float (sums, means, softmax and norm statistics
// accumulate in float), and each result is rounded once to its element type.
// GEMM-shaped ops widen half inputs and call cblas_sgemm (FP32 accumulation).
//
// Operand conventions: operands come in ODS order. An absent optional operand
// is either left off the end of `in` or passed as a TensorRef whose data is
// null (needed when a later operand is present: layer_norm x, -, bias).
// A result whose data is null is not computed (unused backward results).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_KERNELS_H
#define AMPC_RUNTIME_CPU_KERNELS_H

#include "runtime/Model.h"

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ampc::cpu {

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

// Bytes per element of |dtype|.
size_t dtypeSize(DType dtype);

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

using Kernel = void (*)(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs);

// "graph.linear" (or "linear") -> its kernel; nullptr for unknown names.
Kernel lookup(std::string_view opName);

// Every registered op name ("graph.add", ...), in runtime/cpu/Ops.def order.
std::span<const std::string_view> registeredOps();

} // namespace ampc::cpu

#endif
