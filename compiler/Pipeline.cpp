//===- Pipeline.cpp - The training pipeline --------------------------------===//
#include "compiler/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;

std::string ampc::effectiveLossScale(const CompileOptions &o) {
  if (!o.lossScale.empty())
    return o.lossScale;
  return o.amp == "fp16" ? "dynamic" : "none";
}

// A number as a pass option: every digit that matters.
static std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

// "static:1024" -> 1024; nullopt when malformed.
static std::optional<double> staticScale(llvm::StringRef mode) {
  if (!mode.consume_front("static:"))
    return std::nullopt;
  double s;
  if (mode.getAsDouble(s) || !(s > 0))
    return std::nullopt;
  return s;
}

std::string ampc::validate(const CompileOptions &o) {
  if (o.target != "cpu" && o.target != "cuda")
    return "--target=" + o.target + ": expected cpu or cuda";
  if (o.amp != "off" && o.amp != "fp16" && o.amp != "bf16")
    return "--amp=" + o.amp + ": expected off, fp16 or bf16";
  if (o.optimizer != "sgd" && o.optimizer != "adam" && o.optimizer != "adamw")
    return "--optimizer=" + o.optimizer + ": expected sgd, adam or adamw";
  std::string ls = effectiveLossScale(o);
  if (ls != "dynamic" && ls != "none" && !staticScale(ls))
    return "--loss-scale=" + ls +
           ": expected dynamic, static:S (S > 0) or none";
  if (o.clipNorm < 0 || o.clipValue < 0)
    return "--clip-norm and --clip-value must be >= 0";
  if (o.accumSteps < 1)
    return "--accum-steps must be >= 1";
  if (o.nesterov && o.optimizer != "sgd")
    return "--nesterov needs --optimizer=sgd";
  return "";
}

LogicalResult ampc::buildTrainingPipeline(OpPassManager &pm,
                                          const CompileOptions &o,
                                          std::string &error) {
  error = validate(o);
  if (!error.empty())
    return failure();
  std::string ls = effectiveLossScale(o);
  std::string s;
  llvm::raw_string_ostream p(s);
  if (o.amp != "off" && !o.gradGiven) {
    p << "graph-autocast{mode=" << o.amp;
    if (!o.policy.empty())
      p << " policy=" << o.policy;
    p << "},";
  }
  if (!o.gradGiven)
    p << "graph-autodiff,";
  p << "train-build-step{amp=" << o.amp << " optimizer=" << o.optimizer
    << " loss-scale=" << (staticScale(ls) ? "static" : ls);
  if (auto scale = staticScale(ls))
    p << " init-scale=" << num(*scale);
  p << " clip-norm=" << num(o.clipNorm) << " clip-value=" << num(o.clipValue)
    << " accum-steps=" << o.accumSteps
    << " nesterov=" << (o.nesterov ? "true" : "false");
  if (o.lr)
    p << " lr=" << num(*o.lr);
  if (o.momentum)
    p << " momentum=" << num(*o.momentum);
  if (o.weightDecay)
    p << " weight-decay=" << num(*o.weightDecay);
  if (o.growthInterval)
    p << " growth-interval=" << *o.growthInterval;
  if (o.hysteresis)
    p << " hysteresis=" << *o.hysteresis;
  p << "},train-fuse-epilogue,cse,kernel-fuse-elementwise,kernel-plan-memory";

  // Each pass separately, so a missing one is named in the message.
  std::string rest = s;
  size_t depth = 0, start = 0;
  std::vector<std::string> passes;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i == rest.size() || (rest[i] == ',' && depth == 0)) {
      passes.push_back(rest.substr(start, i - start));
      start = i + 1;
    } else if (rest[i] == '{') {
      ++depth;
    } else if (rest[i] == '}') {
      --depth;
    }
  }
  for (const std::string &pass : passes) {
    std::string diag;
    llvm::raw_string_ostream errs(diag);
    if (failed(parsePassPipeline(pass, pm, errs))) {
      llvm::StringRef name = llvm::StringRef(pass).split('{').first;
      error = diag.find("does not refer to a registered pass") !=
                      std::string::npos
                  ? "the pass '" + name.str() +
                        "' is not available in this ampc build"
                  : "bad pipeline element '" + pass + "': " + diag;
      return failure();
    }
  }
  return success();
}
