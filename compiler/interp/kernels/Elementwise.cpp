//===- Elementwise.cpp - Unary, binary, cast, dropout and their VJP ops ----===//
#include "compiler/interp/Kernel.h"
#include "runtime/numerics/Dropout.h"
#include "runtime/numerics/Elementwise.h"

#include <cmath>

using namespace ampc::interp;

namespace {

namespace num = ampc::num;

template <double (*F)(double)>
KernelResult unary(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = F(in[0].f[k]);
  return one(std::move(out));
}

// The formulas of runtime/numerics/Elementwise.h, evaluated in double.
double neg(double x) { return -x; }
double tanhF(double x) { return std::tanh(x); }
double expF(double x) { return std::exp(x); }
double logF(double x) { return std::log(x); }
double sqrtF(double x) { return std::sqrt(x); }
double absF(double x) { return std::fabs(x); }
double erfF(double x) { return std::erf(x); }
double sinF(double x) { return std::sin(x); }
double cosF(double x) { return std::cos(x); }
double reciprocal(double x) { return 1.0 / x; }

template <double (*F)(double, double)>
KernelResult binary(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  std::vector<int64_t> idx(out.rank(), 0);
  if (out.size() == 0)
    return one(std::move(out));
  int64_t k = 0;
  do {
    double a = in[0].f[broadcastIndex(in[0].shape, out.shape, idx)];
    double b = in[1].f[broadcastIndex(in[1].shape, out.shape, idx)];
    out.f[k++] = F(a, b);
  } while (nextIndex(idx, out.shape));
  return one(std::move(out));
}

double add(double a, double b) { return a + b; }
double sub(double a, double b) { return a - b; }
double mul(double a, double b) { return a * b; }
double divF(double a, double b) { return a / b; }

// Attribute defaults as in GraphOps.td (absent attributes are defaults).
double negativeSlope(const OpContext &ctx) {
  return ctx.getFloat("negative_slope", 0.01);
}
double lowerBound(const OpContext &ctx) {
  return ctx.getOptionalFloat("min").value_or(-INFINITY);
}
double upperBound(const OpContext &ctx) {
  return ctx.getOptionalFloat("max").value_or(INFINITY);
}

KernelResult leakyRelu(const OpContext &ctx, std::span<const Tensor> in) {
  double slope = negativeSlope(ctx);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::leakyRelu(in[0].f[k], slope);
  return one(std::move(out));
}

// elu's coefficients: alpha * scale, scale, input_scale (in double: the
// reference; the kernels form them in float, as PyTorch).
struct EluCoefs {
  double neg, pos, negInput;
};
EluCoefs eluCoefs(const OpContext &ctx) {
  double scale = ctx.getFloat("scale", 1.0);
  return {ctx.getFloat("alpha", 1.0) * scale, scale,
          ctx.getFloat("input_scale", 1.0)};
}

KernelResult elu(const OpContext &ctx, std::span<const Tensor> in) {
  EluCoefs c = eluCoefs(ctx);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::elu(in[0].f[k], c.neg, c.pos, c.negInput);
  return one(std::move(out));
}

KernelResult softplus(const OpContext &ctx, std::span<const Tensor> in) {
  double beta = ctx.getFloat("beta", 1.0), th = ctx.getFloat("threshold", 20.0);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::softplus(in[0].f[k], beta, th);
  return one(std::move(out));
}

KernelResult clamp(const OpContext &ctx, std::span<const Tensor> in) {
  double lo = lowerBound(ctx), hi = upperBound(ctx);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::clamp(in[0].f[k], lo, hi);
  return one(std::move(out));
}

// where(c, x, y): the three shapes broadcast; the condition is an integer
// tensor, nonzero is true.
KernelResult where(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  std::vector<int64_t> idx(out.rank(), 0);
  if (out.size() == 0)
    return one(std::move(out));
  int64_t k = 0;
  do {
    double c = in[0].at(broadcastIndex(in[0].shape, out.shape, idx));
    double x = in[1].f[broadcastIndex(in[1].shape, out.shape, idx)];
    double y = in[2].f[broadcastIndex(in[2].shape, out.shape, idx)];
    out.f[k++] = c != 0.0 ? x : y;
  } while (nextIndex(idx, out.shape));
  return one(std::move(out));
}

// masked_fill(x, mask): value where the (broadcast) mask is nonzero.
KernelResult maskedFill(const OpContext &ctx, std::span<const Tensor> in) {
  double value = ctx.getFloat("value", 0.0);
  Tensor out = ctx.makeResult();
  std::vector<int64_t> idx(out.rank(), 0);
  if (out.size() == 0)
    return one(std::move(out));
  int64_t k = 0;
  do {
    double m = in[1].at(broadcastIndex(in[1].shape, out.shape, idx));
    out.f[k] = m != 0.0 ? value : in[0].f[k];
    ++k;
  } while (nextIndex(idx, out.shape));
  return one(std::move(out));
}

KernelResult gelu(const OpContext &ctx, std::span<const Tensor> in) {
  bool approx = ctx.getString("approximate", "none") == "tanh";
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = approx ? num::geluTanh(in[0].f[k]) : num::geluErf(in[0].f[k]);
  return one(std::move(out));
}

KernelResult pow(const OpContext &ctx, std::span<const Tensor> in) {
  double e = ctx.getFloat("exponent", 1.0);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::power(in[0].f[k], e);
  return one(std::move(out));
}

// Inverted dropout: kept elements times 1/(1-p), rounded once to the type.
// The backward of dropout is dropout of the cotangent with the same key.
KernelResult dropout(const OpContext &ctx, std::span<const Tensor> in) {
  double p = ctx.getFloat("p", 0.0);
  uint64_t key = uint64_t(ctx.getInt("key", 0));
  const InterpOptions &o = ctx.getOptions();
  uint64_t stream = ampc::num::dropoutStreamKey(o.seed, o.step, key);
  double scale = 1.0 / (1.0 - p);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = ampc::num::dropoutKeep(stream, uint64_t(k), p)
                   ? in[0].f[k] * scale
                   : 0.0;
  return one(std::move(out));
}

// The interpreter rounds the result to the target type.
KernelResult cast(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  out.f = in[0].f;
  return one(std::move(out));
}

// relu_backward(x, g): g where x > 0, else 0.
KernelResult reluBackward(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::reluGrad(in[0].f[k], in[1].f[k]);
  return one(std::move(out));
}

// gelu_backward(x, g): g * gelu'(x).
KernelResult geluBackward(const OpContext &ctx, std::span<const Tensor> in) {
  bool approx = ctx.getString("approximate", "none") == "tanh";
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = approx ? num::geluTanhGrad(in[0].f[k], in[1].f[k])
                      : num::geluErfGrad(in[0].f[k], in[1].f[k]);
  return one(std::move(out));
}

KernelResult siluBackward(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::siluGrad(in[0].f[k], in[1].f[k]);
  return one(std::move(out));
}

KernelResult leakyReluBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  double slope = negativeSlope(ctx);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::leakyReluGrad(in[0].f[k], in[1].f[k], slope);
  return one(std::move(out));
}

KernelResult eluBackward(const OpContext &ctx, std::span<const Tensor> in) {
  EluCoefs c = eluCoefs(ctx);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::eluGrad(in[0].f[k], in[1].f[k], c.neg, c.pos, c.negInput);
  return one(std::move(out));
}

KernelResult softplusBackward(const OpContext &ctx,
                              std::span<const Tensor> in) {
  double beta = ctx.getFloat("beta", 1.0), th = ctx.getFloat("threshold", 20.0);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::softplusGrad(in[0].f[k], in[1].f[k], beta, th);
  return one(std::move(out));
}

KernelResult clampBackward(const OpContext &ctx, std::span<const Tensor> in) {
  double lo = lowerBound(ctx), hi = upperBound(ctx);
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::clampGrad(in[0].f[k], in[1].f[k], lo, hi);
  return one(std::move(out));
}

// maximum_backward(a, b, g): operands share the result's shape (verifier).
KernelResult maximumBackward(const OpContext &ctx,
                             std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < out.size(); ++k)
    out.f[k] = num::maximumGrad(in[0].f[k], in[1].f[k], in[2].f[k]);
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerElementwiseKernels(KernelTable &t) {
  t["graph.neg"] = unary<neg>;
  t["graph.relu"] = unary<num::relu<double>>;
  t["graph.tanh"] = unary<tanhF>;
  t["graph.sigmoid"] = unary<num::sigmoid<double>>;
  t["graph.exp"] = unary<expF>;
  t["graph.log"] = unary<logF>;
  t["graph.sqrt"] = unary<sqrtF>;
  t["graph.rsqrt"] = unary<num::rsqrt<double>>;
  t["graph.add"] = binary<add>;
  t["graph.sub"] = binary<sub>;
  t["graph.mul"] = binary<mul>;
  t["graph.div"] = binary<divF>;
  t["graph.gelu"] = gelu;
  t["graph.pow"] = pow;
  t["graph.dropout"] = dropout;
  t["graph.cast"] = cast;
  t["graph.relu_backward"] = reluBackward;
  t["graph.gelu_backward"] = geluBackward;
  t["graph.silu"] = unary<num::silu<double>>;
  t["graph.abs"] = unary<absF>;
  t["graph.erf"] = unary<erfF>;
  t["graph.sin"] = unary<sinF>;
  t["graph.cos"] = unary<cosF>;
  t["graph.reciprocal"] = unary<reciprocal>;
  t["graph.leaky_relu"] = leakyRelu;
  t["graph.elu"] = elu;
  t["graph.softplus"] = softplus;
  t["graph.clamp"] = clamp;
  t["graph.maximum"] = binary<num::maximum<double>>;
  t["graph.minimum"] = binary<num::minimum<double>>;
  t["graph.where"] = where;
  t["graph.masked_fill"] = maskedFill;
  t["graph.silu_backward"] = siluBackward;
  t["graph.leaky_relu_backward"] = leakyReluBackward;
  t["graph.elu_backward"] = eluBackward;
  t["graph.softplus_backward"] = softplusBackward;
  t["graph.clamp_backward"] = clampBackward;
  t["graph.maximum_backward"] = maximumBackward;
}
