//===- Activation.h - Forwards to Elementwise.h -----------------*- C++ -*-===//
//
// ReLU and GELU moved into runtime/numerics/Elementwise.h with the other
// elementwise formulas. Generated code's preamble still includes this name.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_ACTIVATION_H
#define AMPC_RUNTIME_NUMERICS_ACTIVATION_H

#include "runtime/numerics/Elementwise.h"

#endif
