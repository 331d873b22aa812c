//===- HyperRules.h - What each runtime hyper-parameter may be --*- C++ -*-===//
//
// One rule per hyper-parameter of HyperParams.def, shared by the binary
// (checkHyper: its flags, its compiled-in defaults, a resumed checkpoint)
// and the compiler (train.config's verifier), so that `ampc compile` cannot
// build a binary that refuses its own defaults. Header only, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_HYPERRULES_H
#define AMPC_RUNTIME_HYPERRULES_H

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace ampc::rt {

// "" when |v| is a valid value of the hyper-parameter |name| (as
// HyperParams.def spells it), else what is wrong ("must be >= 0").
inline std::string hyperRule(std::string_view n, double v) {
  auto atLeast = [&](double lo) -> std::string {
    if (v >= lo)
      return "";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", lo);
    return std::string("must be >= ") + buf;
  };
  if (!std::isfinite(v))
    return "must be finite";
  if (n == "lr" || n == "momentum" || n == "eps" || n == "weight_decay" ||
      n == "clip_norm" || n == "clip_value" || n == "min_scale" ||
      n == "scale_floor" || n == "max_consecutive_skips")
    return atLeast(0);
  if (n == "beta1" || n == "beta2")
    return v >= 0 && v < 1 ? "" : "must be in [0, 1)";
  // The unscale multiplies by 1/scale, as GradScaler does: below the
  // smallest normal float that is inf, and every gradient inf or NaN.
  if (n == "init_scale" || n == "max_scale")
    return v >= FLT_MIN
               ? ""
               : atLeast(FLT_MIN) + " (smaller scales' reciprocals overflow)";
  if (n == "growth_factor")
    return atLeast(1);
  if (n == "backoff_factor")
    return v > 0 && v <= 1 ? "" : "must be in (0, 1]";
  if (n == "growth_interval" || n == "hysteresis")
    return atLeast(1);
  return ""; // a row without a rule: finite is enough
}

} // namespace ampc::rt

#endif // AMPC_RUNTIME_HYPERRULES_H
