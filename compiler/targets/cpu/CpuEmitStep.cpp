//===- CpuEmitStep.cpp - step(): the fused AMP epilogue --------------------===//
//
// Prints train.fused_epilogue as calls into the epilogue helpers
// (runtime/cpu/Epilogue.h) and the loss-scale state machine
// (runtime/numerics/Scaler.h): one definition of each formula, shared with
// the reference interpreter and the tests.
//
//===----------------------------------------------------------------------===//
#include "compiler/targets/cpu/CpuEmitterImpl.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;

LogicalResult ampc::cpu_emit::emitStep(const Program &p,
                                       raw_indented_ostream &os) {
  train::FusedEpilogueOp e = p.epilogue;
  StringRef opt = e.getOptimizer();
  bool sgd = opt == "sgd";
  size_t n = p.paramNames.size();
  if (e.getParams().size() != n)
    return e.emitOpError() << "updates " << e.getParams().size()
                           << " parameters; the model has " << n;

  os << "ampc::rt::StepStats step(const ampc::rt::Hyper &h, float gradDivisor) "
        "override {\n";
  os.indent();
  os << "// train.fused_epilogue {optimizer = \"" << opt
     << "\", loss_scale = \"" << e.getLossScale() << "\""
     << (e.getClipNorm() ? ", clip_norm" : "")
     << (e.getClipValue() ? ", clip_value" : "")
     << (e.getNesterov() ? ", nesterov" : "") << "}\n";
  os << "ampc::rt::StepStats stats;\n"
     << "stats.scaleUsed = scaler_.scale;\n"
     << "stats.loss = lossAccumulator_ / gradDivisor;\n"
     << "lossAccumulator_ = 0.0f;\n"
     << "ampc::cpu::GradBuffer grads[] = {";
  for (size_t i = 0; i < n; ++i)
    os << (i ? ", " : "") << "{g_[" << i << "].data(), int64_t(g_[" << i
       << "].size())}";
  os << "};\n\n";

  os << "// Unscale (gradients of loss * scale, summed over gradDivisor "
        "micro-batches),\n// check for inf/NaN, global norm.\n";
  os << "const float invScale = gradDivisor == 1.0f\n"
        "    ? ampc::num::invScale(scaler_.scale)\n"
        "    : float(1.0 / (double(scaler_.scale) * double(gradDivisor)));\n";
  os << "const ampc::cpu::UnscaleResult unscaled = "
        "ampc::cpu::unscaleCheckAndNorm(grads, invScale);\n";
  os << "const bool foundInf = unscaled.foundInf;\n";
  os << "stats.gradNorm = unscaled.norm;\n";
  os << "stats.skipped = foundInf ? 1 : 0;\n";
  if (e.getClipNorm())
    os << "\n// Clip by global norm (clip_grad_norm_).\n"
       << "if (!foundInf)\n"
       << "  stats.clipCoef = ampc::cpu::clipGradNorm(grads, unscaled.norm, "
          "h.clipNorm);\n";
  if (e.getClipValue())
    os << "\n// Clip by value (clip_grad_value_).\n"
       << "if (!foundInf)\n"
       << "  ampc::cpu::clipGradValue(grads, h.clipValue);\n";

  os << "\n// The optimizer update; an overflowing step changes nothing.\n";
  os << "if (!foundInf) {\n";
  os.indent();
  os << "++step_;\n";
  if (sgd) {
    os << "ampc::cpu::SgdOptions opt;\n"
       << "opt.lr = h.lr;\nopt.momentum = h.momentum;\n"
       << "opt.dampening = h.dampening;\nopt.weightDecay = h.weightDecay;\n"
       << "opt.nesterov = " << (e.getNesterov() ? "true" : "false") << ";\n";
    os << "for (int p = 0; p < kNumParams; ++p)\n"
       << "  ampc::cpu::sgdStep(w_[p].data(), g_[p].data(), m_[p].data(), "
          "int64_t(w_[p].size()), opt, step_ == 1);\n";
  } else {
    os << "ampc::cpu::AdamOptions opt;\n"
       << "opt.lr = h.lr;\nopt.beta1 = h.beta1;\nopt.beta2 = h.beta2;\n"
       << "opt.eps = h.eps;\nopt.weightDecay = h.weightDecay;\n"
       << "opt.decoupled = " << (opt == "adamw" ? "true" : "false") << ";\n";
    os << "for (int p = 0; p < kNumParams; ++p)\n"
       << "  ampc::cpu::adamStep(w_[p].data(), g_[p].data(), m_[p].data(), "
          "v_[p].data(), int64_t(w_[p].size()), opt, step_);\n";
  }
  os.unindent();
  os << "}\n\n";

  StringRef mode = e.getLossScale();
  if (mode == "dynamic") {
    os << "// Dynamic loss scale (GradScaler.update).\n"
       << "ampc::num::updateScaler(scaler_, foundInf, "
          "ampc::rt::lossScaleParams(h));\n";
  } else {
    os << "// " << (mode == "static" ? "Static" : "No")
       << " loss scaling: the scale stays; skipped steps are counted.\n"
       << "if (foundInf)\n  ++scaler_.skippedSteps;\n";
  }
  os << "return stats;\n";
  os.unindent();
  os << "}\n";
  return success();
}
