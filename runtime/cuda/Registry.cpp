//===- Registry.cpp - Op name -> CUDA kernel ------------------------------===//
#include "runtime/cuda/Kernels.h"

#include <array>

namespace ampc::cuda {

#define AMPC_CUDA_OP(name, function)                                           \
  void function(std::span<const TensorRef>, std::span<const TensorRef>,        \
                const Attrs &, cudaStream_t);
#include "runtime/cuda/Ops.def"

namespace {

struct Entry {
  std::string_view name;
  Kernel kernel;
};

constexpr Entry kEntries[] = {
#define AMPC_CUDA_OP(name, function) {name, &function},
#include "runtime/cuda/Ops.def"
};

constexpr auto kNames = [] {
  std::array<std::string_view, std::size(kEntries)> names{};
  for (size_t i = 0; i < names.size(); ++i)
    names[i] = kEntries[i].name;
  return names;
}();

} // namespace

Kernel lookup(std::string_view opName) {
  for (const Entry &e : kEntries)
    if (e.name == opName || (!opName.starts_with("graph.") &&
                             e.name.substr(6) == opName))
      return e.kernel;
  return nullptr;
}

std::span<const std::string_view> registeredOps() { return kNames; }

} // namespace ampc::cuda
