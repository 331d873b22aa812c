//===- Pipeline.h - The training pipeline, assembled in one place -*- C++ -*-===//
#ifndef AMPC_COMPILER_PIPELINE_H
#define AMPC_COMPILER_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>

namespace ampc {

// What `ampc compile` fixes at compile time, plus the defaults of the
// runtime hyperparameters (unset: the runtime's Hyper defaults).
struct CompileOptions {
  std::string target = "cpu";
  std::string amp = "off";          // off | fp16 | bf16
  std::string optimizer = "adamw";  // sgd | adam | adamw
  std::string lossScale;            // dynamic | static:S | none; "" = by amp
  double clipNorm = 0;              // 0: off
  double clipValue = 0;             // 0: off
  int accumSteps = 1;
  bool nesterov = false;
  std::optional<double> lr, momentum, weightDecay;
  std::optional<int> growthInterval, hysteresis;
  std::string policy;               // autocast policy file ("" = default)
  // The module already holds @<model>_grad (hand-written, or from an
  // earlier run): autocast and autodiff are skipped.
  bool gradGiven = false;
};

// The loss-scale mode after defaults: dynamic for fp16, none otherwise.
std::string effectiveLossScale(const CompileOptions &options);

// Checks the options; returns an error message, or "" when they are valid.
std::string validate(const CompileOptions &options);

// Adds the passes that take a model file to the kernel level: autocast
// (unless amp is off), autodiff, the training step and its fused epilogue,
// CSE (one cast per parameter and step), elementwise fusion and the memory
// plan. Fails with a message when the options are invalid.
mlir::LogicalResult buildTrainingPipeline(mlir::OpPassManager &pm,
                                          const CompileOptions &options,
                                          std::string &error);

} // namespace ampc

#endif
