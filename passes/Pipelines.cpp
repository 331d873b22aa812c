//===- Pipelines.cpp - Named pass pipelines --------------------------------===//
#include "passes/Pipelines.h"
#include "passes/Passes.h"
#include "runtime/HyperRules.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace mlir;

std::string ampc::effectiveLossScale(const TrainPipelineOptions &o) {
  if (!o.lossScale.empty())
    return o.lossScale;
  return o.amp == "fp16" ? "dynamic" : "none";
}

// "static:1024" -> 1024; nullopt when malformed.
static std::optional<double> staticScale(llvm::StringRef mode) {
  if (!mode.consume_front("static:"))
    return std::nullopt;
  double s;
  // The binary holds the scale as a float, under --init-scale's rule.
  if (mode.getAsDouble(s) || !ampc::rt::hyperRule("init_scale", float(s)).empty())
    return std::nullopt;
  return s;
}

std::string ampc::validate(const TrainPipelineOptions &o) {
  if (o.amp != "off" && o.amp != "fp16" && o.amp != "bf16")
    return "--amp=" + o.amp + ": expected off, fp16 or bf16";
  if (o.optimizer != "sgd" && o.optimizer != "adam" && o.optimizer != "adamw")
    return "--optimizer=" + o.optimizer + ": expected sgd, adam or adamw";
  std::string ls = effectiveLossScale(o);
  if (ls != "dynamic" && ls != "none" && !staticScale(ls))
    return "--loss-scale=" + ls +
           ": expected dynamic, static:S (S a finite float >= 1.17549435e-38) "
           "or none";
  // The defaults compiled into the binary follow the binary's own rules for
  // its flags (checkHyper): a NaN would otherwise switch clipping off or
  // leave a default the binary refuses at start.
  // They are floats there: a double beyond FLT_MAX would become inf, and a
  // clipping threshold below the smallest float 0 with clipping on.
  auto check = [](llvm::StringRef flag, double v, bool negativeOk,
                  bool positiveStays) -> std::string {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", v);
    std::string what = ("--" + flag + "=" + buf + ": ").str();
    if (!std::isfinite(v) || (v < 0 && !negativeOk))
      return what + (negativeOk ? "must be finite" : "must be a finite number >= 0");
    if (!std::isfinite(float(v)))
      return what + "must be at most 3.40282347e+38 (a float)";
    if (positiveStays && v > 0 && float(v) == 0)
      return what + "rounds to 0 as a float";
    return "";
  };
  for (auto [flag, v, stays] :
       {std::tuple<llvm::StringRef, double, bool>{"clip-norm", o.clipNorm, true},
        {"clip-value", o.clipValue, true},
        {"lr", o.lr, false},
        {"momentum", o.momentum, false}})
    if (std::string e = check(flag, v, false, stays); !e.empty())
      return e;
  // Negative: torch.optim's default for the optimizer.
  if (std::string e = check("weight-decay", o.weightDecay, true, false);
      !e.empty())
    return e;
  if (o.accumSteps < 1)
    return "--accum-steps must be >= 1";
  if (o.nesterov && o.optimizer != "sgd")
    return "--nesterov needs --optimizer=sgd";
  return "";
}

void ampc::buildTrainingPipeline(OpPassManager &pm,
                                 const TrainPipelineOptions &o) {
  if (o.amp != "off" && !o.gradGiven) {
    GraphAutocastOptions autocast;
    autocast.mode = o.amp;
    autocast.policy = o.policy;
    pm.addPass(createGraphAutocast(autocast));
  }
  if (o.fusePackedAttention && !o.gradGiven)
    pm.addPass(createGraphFusePackedAttention());
  if (!o.gradGiven)
    pm.addPass(createGraphAutodiff());
  if (o.saveAttentionStats)
    pm.addPass(createGraphSaveAttentionStats());
  if (o.foldDataMovement) {
    pm.addPass(createGraphFoldGemmTranspose());
    pm.addPass(createGraphCollapseDataMovement());
  }

  std::string ls = effectiveLossScale(o);
  TrainBuildStepOptions step;
  step.amp = o.amp;
  step.optimizer = o.optimizer;
  step.lossScale = staticScale(ls) ? "static" : ls;
  if (auto scale = staticScale(ls))
    step.initScale = *scale;
  step.clipNorm = o.clipNorm;
  step.clipValue = o.clipValue;
  step.accumSteps = o.accumSteps;
  step.nesterov = o.nesterov;
  step.lr = o.lr;
  step.momentum = o.momentum;
  step.weightDecay = o.weightDecay;
  step.growthInterval = o.growthInterval;
  step.hysteresis = o.hysteresis;
  pm.addPass(createTrainBuildStep(step));
  pm.addPass(createTrainDropEvalOutputs());
  pm.addPass(createTrainFuseEpilogue());
  pm.addPass(createCSEPass()); // one cast per parameter and step
  if (o.halfWeightCopies && o.amp != "off")
    pm.addPass(createTrainHalfWeightCopies());
  pm.addPass(createGraphAbsorbCasts()); // after CSE: one cast per value
  if (o.fuseCrossEntropy)
    pm.addPass(createGraphFuseCrossEntropy()); // on the absorbed types
  if (o.padClasses)
    pm.addPass(createGraphPadClasses()); // on cross_entropy_with_grad
  if (o.fuseEmbeddingGradSum)
    pm.addPass(createGraphFuseEmbeddingGradSum()); // on the absorbed casts
  if (o.fuseBiasGrad)
    pm.addPass(createGraphFuseBiasGrad()); // after CSE: one reshape of dY
  if (o.fuseGemmGelu)
    pm.addPass(createGraphFuseGemmGelu()); // after the bias gradients
  if (o.halfGrads && o.amp != "off")
    pm.addPass(createTrainHalfGrads()); // on the final casts, before fusion
  pm.addPass(createKernelFuseElementwise());
  if (o.fuseResidualNorm)
    pm.addPass(createKernelFuseResidualNorm()); // on the fused loops
  if (o.hoistGrads)
    pm.addPass(createKernelHoistGrads()); // before the plan: shorter lifetimes
  pm.addPass(createKernelPlanMemory());
}

void ampc::registerPipelines() {
  // registerPassPipeline rather than PassPipelineRegistration: invalid
  // options are reported, not turned into a bad pipeline.
  registerPassPipeline(
      "ampc-train-pipeline",
      "The training pipeline of `ampc compile`: model file to kernel level",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        TrainPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error = validate(options);
        if (!error.empty())
          return errorHandler("ampc-train-pipeline: " + error);
        buildTrainingPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(TrainPipelineOptions());
      });
}
