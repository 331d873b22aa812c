//===- Init.h - Parameter initializers (torch.nn.init formulas) -*- C++ -*-===//
#ifndef AMPC_RUNTIME_NUMERICS_INIT_H
#define AMPC_RUNTIME_NUMERICS_INIT_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ampc::num {

// What every initializer reduces to once fans and gains are known.
struct InitSpec {
  enum Kind { Constant, Normal, Uniform, TruncNormal } kind = Constant;
  double p0 = 0; // Constant: value; Normal/TruncNormal: mean; Uniform: low
  double p1 = 0; // Normal/TruncNormal: std; Uniform: high
  double lo = 0, hi = 0; // TruncNormal: bounds
};

struct Fans {
  int64_t fanIn = 0, fanOut = 0;
};

// PyTorch's _calculate_fan_in_and_fan_out: dim 1 is in, dim 0 is out, both
// times the receptive field (product of dims 2..). Needs rank >= 2.
Fans computeFans(std::span<const int64_t> shape);

// torch.nn.init.calculate_gain; |param| is leaky_relu's negative slope.
// Returns a negative value for an unknown nonlinearity.
double calculateGain(std::string_view nonlinearity, double param = 0.01);

// The named initializer with its parameters, resolved against |shape|.
// kind: zeros ones constant normal uniform xavier_uniform xavier_normal
// kaiming_uniform kaiming_normal trunc_normal.
struct InitAttrs {
  std::string kind;
  double value = 0, mean = 0, std = 1, a = 0, b = 1, gain = 1;
  std::string mode = "fan_in", nonlinearity = "leaky_relu";
};
InitSpec resolveInit(const InitAttrs &attrs, std::span<const int64_t> shape);

// Fills |out| deterministically: element i depends only on (seed, stream, i).
void fillInit(const InitSpec &spec, uint64_t seed, uint64_t stream,
              std::span<float> out);

// The inverse error function (double precision, Newton-refined).
double erfinv(double x);

} // namespace ampc::num

#endif
