//===- TrainStep.h - Attribute names of the step function -------*- C++ -*-===//
//
// `@<model>_step` (train-build-step) marks each argument and result with
// what it is, so later passes and the emitters find the pieces by name.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_TRAINSTEP_H
#define AMPC_PASSES_TRAINSTEP_H

#include "llvm/ADT/StringRef.h"

namespace ampc {

// On @<model>_grad arguments (the graph-autodiff contract).
inline constexpr llvm::StringLiteral kGraphInputAttr = "graph.input";
inline constexpr llvm::StringLiteral kGraphParamAttr = "graph.param";
inline constexpr llvm::StringLiteral kGraphLossScaleAttr = "graph.loss_scale";
inline constexpr llvm::StringLiteral kGraphOutputAttr = "graph.output";
inline constexpr llvm::StringLiteral kGraphGradAttr = "graph.grad";

// On @<model>_step arguments and results.
inline constexpr llvm::StringLiteral kTrainParamAttr = "train.param";
inline constexpr llvm::StringLiteral kTrainGradAttr = "train.grad";
inline constexpr llvm::StringLiteral kTrainStateAttr = "train.state";
inline constexpr llvm::StringLiteral kTrainStepCountAttr = "train.step_count";
inline constexpr llvm::StringLiteral kTrainScalerAttr = "train.scaler";
inline constexpr llvm::StringLiteral kTrainGradDivisorAttr =
    "train.grad_divisor";
inline constexpr llvm::StringLiteral kTrainHyperAttr = "train.hyper";
inline constexpr llvm::StringLiteral kTrainStatAttr = "train.stat";
// On @<model>_step itself: the compiled-in configuration and the defaults
// of the runtime hyperparameters.
inline constexpr llvm::StringLiteral kTrainConfigAttr = "train.config";
inline constexpr llvm::StringLiteral kTrainDefaultsAttr = "train.defaults";

} // namespace ampc

#endif
