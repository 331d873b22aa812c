//===- TargetSyntax.h - What a target spells differently --------*- C++ -*-===//
//
// The shared printers (EmitModel.h, EmitBlock.h) take one of these: the few
// words in which the C++ of the CPU target and the CUDA C++ of the CUDA
// target differ where their logic is the same.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_COMMON_TARGETSYNTAX_H
#define AMPC_COMPILER_TARGETS_COMMON_TARGETSYNTAX_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace ampc::emit {

struct TargetSyntax {
  llvm::StringRef name;         // "CPU": diagnostics and comments
  llvm::StringRef target;       // "cpu": CompileConfig::target
  llvm::StringRef library;      // "ampc::cpu": Kernel, Attrs
  // C++ element type of a tensor's elements in this target's code.
  std::string (*elementType)(mlir::Type);
  // A float math function: prefix + "exp" + suffix ("std::exp", "expf").
  llvm::StringRef mathPrefix, mathSuffix;
  // Function qualifiers of the scalar helpers ("inline").
  llvm::StringRef scalarQualifiers;
  // The helper rounding a float to T and back: "round" in round<T>(x).
  llvm::StringRef roundHelper;
  // What a fused region becomes, for diagnostics: "loop", "kernel".
  llvm::StringRef fusedNoun;
  // Attributes a dropout call gets after {"step", ...}: ", {...}" or "".
  llvm::StringRef dropoutExtraAttrs;
  // The float add, sub and mul of an op's formula: "" for the C operators,
  // or a prefix making them functions that are never contracted with the
  // next op into an FMA ("__f" + "add" + "_rn"): each op of a fused region
  // rounds its result as the op alone would (the CPU build has
  // -ffp-contract=off instead).
  llvm::StringRef arithPrefix, arithSuffix;

  std::string math(llvm::StringRef fn) const {
    return (mathPrefix + fn + mathSuffix).str();
  }
};

} // namespace ampc::emit

#endif
