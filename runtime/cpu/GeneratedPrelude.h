//===- GeneratedPrelude.h - What every generated CPU model file includes --===//
//
// The first line of the C++ that `ampc compile` generates for the CPU target
// (compiler/targets/cpu/CpuEmitter.cpp). One header, so the build can
// precompile it with exactly the flags `ampc compile` uses
// (cmake/AmpcHostPch.cmake): parsing these headers was about a third of
// compiling a small model's file. Generated code needs nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_GENERATEDPRELUDE_H
#define AMPC_RUNTIME_CPU_GENERATEDPRELUDE_H

#include "runtime/cpu/BlasCore.h"
#include "runtime/cpu/HalfBlocks.h"
#include "runtime/cpu/HostModel.h"
#include "runtime/cpu/Kernels.h"
#include "runtime/numerics/Elementwise.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <vector>

#endif // AMPC_RUNTIME_CPU_GENERATEDPRELUDE_H
