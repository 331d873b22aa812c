//===- TrainOps.h - The training-step dialect -------------------*- C++ -*-===//
#ifndef AMPC_DIALECTS_TRAIN_TRAINOPS_H
#define AMPC_DIALECTS_TRAIN_TRAINOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringRef.h"

#include "dialects/Train/TrainDialect.h.inc"

namespace ampc::train {

// `true` / `false` (the flags of #train.config).
mlir::FailureOr<bool> parseBoolParameter(mlir::AsmParser &parser);

// What each argument and result of @<model>_step is (train-build-step), so
// later passes and the emitters find the pieces by name.
inline constexpr llvm::StringLiteral kParamAttr = "train.param";
inline constexpr llvm::StringLiteral kGradAttr = "train.grad";
inline constexpr llvm::StringLiteral kStateAttr = "train.state";
inline constexpr llvm::StringLiteral kStepCountAttr = "train.step_count";
inline constexpr llvm::StringLiteral kScalerAttr = "train.scaler";
inline constexpr llvm::StringLiteral kGradDivisorAttr = "train.grad_divisor";
inline constexpr llvm::StringLiteral kHyperAttr = "train.hyper";
inline constexpr llvm::StringLiteral kStatAttr = "train.stat";
// On @<model>_step itself: its #train.config.
inline constexpr llvm::StringLiteral kConfigAttr = "train.config";

} // namespace ampc::train

#define GET_ATTRDEF_CLASSES
#include "dialects/Train/TrainAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Train/TrainOps.h.inc"

#endif
