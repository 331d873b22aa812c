//===- CompilerPch.h - headers precompiled for the compiler's sources -------===//
//
// Parsing MLIR's headers and the generated op classes is most of the time
// of a typical compiler source file (GraphAutocast.cpp: 6.1 of 9.6 CPU
// seconds). They are parsed once per build into a precompiled header that
// every compiler target reuses (ampc_compiler_target, AMPC_PCH). Only
// stable, widely included headers belong here; a source file still
// includes what it uses, and -DAMPC_PCH=OFF builds check that it does.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <string>
#include <vector>
