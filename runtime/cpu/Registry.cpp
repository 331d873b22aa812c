//===- Registry.cpp - Op name -> CPU kernel --------------------------------===//
#include "runtime/cpu/Common.h"

namespace ampc::cpu {

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
  if (!opName.starts_with("graph."))
    for (const Entry &e : kEntries)
      if (e.name.substr(6) == opName)
        return e.kernel;
  for (const Entry &e : kEntries)
    if (e.name == opName)
      return e.kernel;
  return nullptr;
}

} // namespace ampc::cpu
