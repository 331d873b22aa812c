//===- Registry.cpp - Op name -> CUDA kernel ------------------------------===//
#include "runtime/cuda/Kernels.h"

namespace ampc::cuda {

// Every kernel's declaration, from the single op list.
#define AMPC_KERNEL_OP(name, function)                                         \
  void function(std::span<const TensorRef>, std::span<const TensorRef>,        \
                const Attrs &, cudaStream_t);
#include "runtime/kernels/Ops.def"

namespace {

struct Entry {
  std::string_view name;
  Kernel kernel;
};

constexpr Entry kEntries[] = {
#define AMPC_KERNEL_OP(name, function) {name, &function},
#include "runtime/kernels/Ops.def"
};

} // namespace

Kernel lookup(std::string_view opName) {
  for (const Entry &e : kEntries)
    if (e.name == opName || (!opName.starts_with("graph.") &&
                             e.name.substr(6) == opName))
      return e.kernel;
  return nullptr;
}

} // namespace ampc::cuda
