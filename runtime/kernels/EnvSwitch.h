//===- EnvSwitch.h - The kernel libraries' environment switches -*- C++ -*-===//
//
// The AMPC_CUDA_* / AMPC_CPU_* variables that select a kernel path (the
// previous one kept selectable, to isolate a difference on a GPU, or for
// A/B timing) are read and checked here, so each switch spells its values
// and its error the same way. Each caller decides when it reads: a path
// chosen once per process keeps the answer in a function-local static; one
// documented as read at each call (so a test can run both paths in one
// process) calls again.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_ENVSWITCH_H
#define AMPC_RUNTIME_KERNELS_ENVSWITCH_H

#include <initializer_list>
#include <string_view>

namespace ampc::kernels {

// The index in |values| of environment variable |name|'s value; unset or
// empty gives 0 (the first value is the default). Any other value is an
// error: "error: NAME=v: expected 'a', 'b' or 'c'" on stderr and exit(1),
// so a misspelt switch never silently runs the default path.
int envChoice(const char *name, std::initializer_list<std::string_view> values);

// Whether environment variable |name| is set to exactly |value| (a switch
// whose other values all mean the default).
bool envIs(const char *name, std::string_view value);

} // namespace ampc::kernels

#endif
