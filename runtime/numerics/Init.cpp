//===- Init.cpp - Parameter initializers -----------------------------------===//
#include "runtime/numerics/Init.h"

#include "runtime/numerics/Philox.h"

#include <algorithm>
#include <cmath>

namespace ampc::num {

Fans computeFans(std::span<const int64_t> shape) {
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i)
    receptive *= shape[i];
  Fans f;
  f.fanIn = shape.size() >= 2 ? shape[1] * receptive : 0;
  f.fanOut = shape.size() >= 1 ? shape[0] * receptive : 0;
  return f;
}

double calculateGain(std::string_view nl, double param) {
  if (nl == "linear" || nl == "conv2d" || nl == "sigmoid")
    return 1.0;
  if (nl == "tanh")
    return 5.0 / 3.0;
  if (nl == "relu")
    return std::sqrt(2.0);
  if (nl == "leaky_relu")
    return std::sqrt(2.0 / (1.0 + param * param));
  if (nl == "selu")
    return 3.0 / 4.0;
  return -1.0;
}

InitSpec resolveInit(const InitAttrs &a, std::span<const int64_t> shape) {
  InitSpec s;
  const std::string &k = a.kind;
  if (k == "zeros" || k == "ones" || k == "constant") {
    s.kind = InitSpec::Constant;
    s.p0 = k == "zeros" ? 0.0 : k == "ones" ? 1.0 : a.value;
    return s;
  }
  if (k == "normal") {
    s.kind = InitSpec::Normal;
    s.p0 = a.mean;
    s.p1 = a.std;
    return s;
  }
  if (k == "uniform") {
    s.kind = InitSpec::Uniform;
    s.p0 = a.a;
    s.p1 = a.b;
    return s;
  }
  if (k == "trunc_normal") {
    s.kind = InitSpec::TruncNormal;
    s.p0 = a.mean;
    s.p1 = a.std;
    s.lo = a.a;
    s.hi = a.b;
    return s;
  }
  Fans f = computeFans(shape);
  if (k == "xavier_uniform" || k == "xavier_normal") {
    double std = a.gain * std::sqrt(2.0 / double(f.fanIn + f.fanOut));
    if (k == "xavier_normal") {
      s.kind = InitSpec::Normal;
      s.p1 = std;
    } else {
      double bound = std::sqrt(3.0) * std;
      s.kind = InitSpec::Uniform;
      s.p0 = -bound;
      s.p1 = bound;
    }
    return s;
  }
  // kaiming_uniform / kaiming_normal
  double fan = double(a.mode == "fan_out" ? f.fanOut : f.fanIn);
  double std = calculateGain(a.nonlinearity, a.a) / std::sqrt(fan);
  if (k == "kaiming_normal") {
    s.kind = InitSpec::Normal;
    s.p1 = std;
  } else {
    double bound = std::sqrt(3.0) * std;
    s.kind = InitSpec::Uniform;
    s.p0 = -bound;
    s.p1 = bound;
  }
  return s;
}

double erfinv(double x) {
  if (x <= -1.0)
    return -INFINITY;
  if (x >= 1.0)
    return INFINITY;
  // Giles' single-precision approximation, then Newton steps on erf.
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                     0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844,
                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                     2.83297682})
      p = c + p * w;
  }
  double y = p * x;
  const double kTwoOverSqrtPi = 1.1283791670955126;
  for (int i = 0; i < 3; ++i)
    y -= (std::erf(y) - x) / (kTwoOverSqrtPi * std::exp(-y * y));
  return y;
}

void fillInit(const InitSpec &s, uint64_t seed, uint64_t stream,
              std::span<float> out) {
  uint64_t key = seed ^ (stream * 0x9E3779B97F4A7C15ull);
  for (size_t i = 0; i < out.size(); ++i) {
    if (s.kind == InitSpec::Constant) {
      out[i] = float(s.p0);
      continue;
    }
    Philox4 r = philox4x32({uint32_t(i), uint32_t(uint64_t(i) >> 32), 0, 0}, key);
    double v;
    switch (s.kind) {
    case InitSpec::Normal:
      v = s.p0 + s.p1 * standardNormal(r[0], r[1]);
      break;
    case InitSpec::Uniform:
      v = s.p0 + (s.p1 - s.p0) * uniform01(r[0]);
      break;
    case InitSpec::TruncNormal: {
      // PyTorch's trunc_normal_: uniform in [cdf(a), cdf(b)], then the
      // inverse CDF, then clamp.
      auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
      double l = cdf((s.lo - s.p0) / s.p1), u = cdf((s.hi - s.p0) / s.p1);
      double t = 2 * l - 1 + (2 * u - 2 * l) * uniform01(r[0]);
      v = s.p0 + s.p1 * std::sqrt(2.0) * erfinv(t);
      v = std::clamp(v, s.lo, s.hi);
      break;
    }
    default:
      v = s.p0;
    }
    out[i] = float(v);
  }
}

} // namespace ampc::num
