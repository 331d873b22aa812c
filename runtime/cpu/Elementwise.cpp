//===- Elementwise.cpp - Unary, binary, dropout, cast, their backward -----===//
//
// Each element is widened to float, computed in float and rounded once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"

#include "runtime/numerics/Dropout.h"
#include "runtime/numerics/Elementwise.h"

#include <cmath>

namespace ampc::cpu {

using namespace detail;

namespace {

template <class F>
void unary(std::string_view op, std::span<const TensorRef> in,
           std::span<const TensorRef> out, F f) {
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  if (x.numel() != y.numel())
    fail(op, "operand and result sizes differ");
  FloatIn a(x);
  FloatOut r(y);
  const float *pa = a.data();
  float *pr = r.data();
  for (int64_t i = 0, n = y.numel(); i < n; ++i)
    pr[i] = f(pa[i]);
  r.commit();
}

template <class F>
void binary(std::string_view op, std::span<const TensorRef> in,
            std::span<const TensorRef> out, F f) {
  const TensorRef &x = required(op, in, 0), &y = required(op, in, 1);
  const TensorRef &z = required(op, out, 0);
  FloatIn a(x), b(y);
  FloatOut r(z);
  const float *pa = a.data(), *pb = b.data();
  float *pr = r.data();
  forEachBroadcast(op, z, x, y, [&](int64_t o, int64_t ia, int64_t ib) {
    pr[o] = f(pa[ia], pb[ib]);
  });
  r.commit();
}

// Attribute defaults as in dialects/Graph/GraphOps.td (an attribute left at
// its default is not printed into the generated call).
float negativeSlope(const Attrs &attrs) {
  return float(attrs.getFloat("negative_slope", 0.01));
}
float beta(const Attrs &attrs) { return float(attrs.getFloat("beta", 1.0)); }
// elu's coefficients as PyTorch's kernel forms them, in float: alpha *
// scale, scale, input_scale.
struct EluCoefs {
  float neg, pos, negInput;
};
EluCoefs eluCoefs(const Attrs &attrs) {
  float scale = float(attrs.getFloat("scale", 1.0));
  return {float(attrs.getFloat("alpha", 1.0)) * scale, scale,
          float(attrs.getFloat("input_scale", 1.0))};
}
float threshold(const Attrs &attrs) {
  return float(attrs.getFloat("threshold", 20.0));
}
float lowerBound(const Attrs &attrs) {
  return attrs.has("min") ? float(attrs.getFloat("min")) : -INFINITY;
}
float upperBound(const Attrs &attrs) {
  return attrs.has("max") ? float(attrs.getFloat("max")) : INFINITY;
}

// Whether element |i| of the integer tensor |t| is nonzero.
bool nonzero(std::string_view op, const TensorRef &t, int64_t i) {
  switch (t.dtype) {
  case DType::I32: return static_cast<const int32_t *>(t.data)[i] != 0;
  case DType::I64: return static_cast<const int64_t *>(t.data)[i] != 0;
  default: fail(op, "the condition must be an i32 or i64 tensor");
  }
}

// Calls f(o, ic, ia, ib) for every element o of |out| with the offsets of
// the three operands broadcast to it.
template <class F>
void forEachBroadcast3(std::string_view op, const TensorRef &out,
                       const TensorRef &c, const TensorRef &a,
                       const TensorRef &b, F &&f) {
  int64_t sc[kMaxRank], sa[kMaxRank], sb[kMaxRank];
  broadcastStrides(op, c, out, sc);
  broadcastStrides(op, a, out, sa);
  broadcastStrides(op, b, out, sb);
  int64_t idx[kMaxRank] = {};
  for (int64_t o = 0, n = out.numel(); o < n; ++o) {
    int64_t ic = 0, ia = 0, ib = 0, rem = o;
    for (int d = out.rank - 1; d >= 0; --d) {
      idx[d] = rem % out.shape[d];
      rem /= out.shape[d];
      ic += idx[d] * sc[d];
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    f(o, ic, ia, ib);
  }
}

bool tanhApprox(const Attrs &attrs) {
  std::string a = attrs.getString("approximate", "none");
  if (a == "tanh")
    return true;
  if (a != "none")
    fail("graph.gelu", "approximate must be \"none\" or \"tanh\"");
  return false;
}

} // namespace

void addKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  binary("graph.add", in, out, [](float a, float b) { return a + b; });
}
void subKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  binary("graph.sub", in, out, [](float a, float b) { return a - b; });
}
void mulKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  binary("graph.mul", in, out, [](float a, float b) { return a * b; });
}
void divKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  binary("graph.div", in, out, [](float a, float b) { return a / b; });
}

void negKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.neg", in, out, [](float x) { return -x; });
}
void reluKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &) {
  unary("graph.relu", in, out, [](float x) { return num::relu(x); });
}
void tanhKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &) {
  unary("graph.tanh", in, out, [](float x) { return num::math::tanh(x); });
}
void sigmoidKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &) {
  unary("graph.sigmoid", in, out, [](float x) { return num::sigmoid(x); });
}
void expKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.exp", in, out, [](float x) { return std::exp(x); });
}
void logKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.log", in, out, [](float x) { return std::log(x); });
}
void sqrtKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &) {
  unary("graph.sqrt", in, out, [](float x) { return std::sqrt(x); });
}
void rsqrtKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &) {
  unary("graph.rsqrt", in, out, [](float x) { return num::rsqrt(x); });
}

void geluKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &attrs) {
  if (tanhApprox(attrs))
    unary("graph.gelu", in, out, [](float x) { return num::geluTanh(x); });
  else
    unary("graph.gelu", in, out, [](float x) { return num::geluErf(x); });
}

void maximumKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &) {
  binary("graph.maximum", in, out,
         [](float a, float b) { return num::maximum(a, b); });
}
void minimumKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &) {
  binary("graph.minimum", in, out,
         [](float a, float b) { return num::minimum(a, b); });
}
void siluKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &) {
  unary("graph.silu", in, out, [](float x) { return num::silu(x); });
}
void absKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.abs", in, out, [](float x) { return std::fabs(x); });
}
void erfKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.erf", in, out, [](float x) { return std::erf(x); });
}
void sinKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.sin", in, out, [](float x) { return std::sin(x); });
}
void cosKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &) {
  unary("graph.cos", in, out, [](float x) { return std::cos(x); });
}
void reciprocalKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &) {
  unary("graph.reciprocal", in, out, [](float x) { return 1.0f / x; });
}
void leakyReluKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  float s = negativeSlope(attrs);
  unary("graph.leaky_relu", in, out,
        [s](float x) { return num::leakyRelu(x, s); });
}
void eluKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &attrs) {
  EluCoefs c = eluCoefs(attrs);
  unary("graph.elu", in, out,
        [c](float x) { return num::elu(x, c.neg, c.pos, c.negInput); });
}
void softplusKernel(std::span<const TensorRef> in,
                    std::span<const TensorRef> out, const Attrs &attrs) {
  float b = beta(attrs), t = threshold(attrs);
  unary("graph.softplus", in, out,
        [b, t](float x) { return num::softplus(x, b, t); });
}
void clampKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &attrs) {
  float lo = lowerBound(attrs), hi = upperBound(attrs);
  unary("graph.clamp", in, out,
        [lo, hi](float x) { return num::clamp(x, lo, hi); });
}

void whereKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &) {
  constexpr std::string_view op = "graph.where";
  const TensorRef &c = required(op, in, 0), &x = required(op, in, 1),
                  &y = required(op, in, 2), &z = required(op, out, 0);
  FloatIn a(x), b(y);
  FloatOut r(z);
  forEachBroadcast3(op, z, c, x, y,
                    [&](int64_t o, int64_t ic, int64_t ia, int64_t ib) {
                      r[o] = nonzero(op, c, ic) ? a[ia] : b[ib];
                    });
  r.commit();
}

// Attribute value (the fill, rounded to the result type once).
void maskedFillKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.masked_fill";
  const TensorRef &x = required(op, in, 0), &m = required(op, in, 1),
                  &y = required(op, out, 0);
  float value = float(attrs.getFloat("value"));
  FloatIn a(x);
  FloatOut r(y);
  forEachBroadcast3(op, y, m, x, x,
                    [&](int64_t o, int64_t im, int64_t ia, int64_t) {
                      r[o] = nonzero(op, m, im) ? value : a[ia];
                    });
  r.commit();
}

void powKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &attrs) {
  float e = float(attrs.getFloat("exponent"));
  unary("graph.pow", in, out, [e](float x) { return num::power(x, e); });
}

// Inverted dropout: kept elements times 1/(1-p) (a float, as PyTorch's
// fused kernel scales); p >= 1 zeroes everything. Attributes: p, key (the
// op's), seed and step (run options the generated code supplies), and shard
// (the data-parallel rank, default 0): element i draws mask index
// shard * numel + i, its place in the global batch (Model::setDataShard).
void dropoutKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs) {
  double p = attrs.getFloat("p");
  uint64_t key = uint64_t(attrs.getInt("key", 0));
  uint64_t seed = uint64_t(attrs.getInt("seed", 0));
  uint64_t step = uint64_t(attrs.getInt("step", 0));
  float scale = p >= 1.0 ? 0.0f : float(1.0 / (1.0 - p));
  const TensorRef &x = required("graph.dropout", in, 0);
  const TensorRef &y = required("graph.dropout", out, 0);
  uint64_t base = uint64_t(attrs.getInt("shard", 0)) * uint64_t(y.numel());
  FloatIn a(x);
  FloatOut r(y);
  for (int64_t i = 0, n = y.numel(); i < n; ++i)
    r[i] = p > 0.0 && !num::dropoutKeep(seed, step, key, base + uint64_t(i), p)
               ? 0.0f
               : (p > 0.0 ? a[i] * scale : a[i]);
  r.commit();
}

void castKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &) {
  const TensorRef &x = required("graph.cast", in, 0);
  const TensorRef &y = required("graph.cast", out, 0);
  if (x.numel() != y.numel())
    fail("graph.cast", "operand and result sizes differ");
  // Widening f16/bf16 to float is exact, so this rounds once.
  FloatIn a(x);
  narrow(a.data(), y);
}

void reluBackwardKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &) {
  binary("graph.relu_backward", in, out,
         [](float x, float g) { return num::reluGrad(x, g); });
}

// dx = g * gelu'(x) (runtime/numerics/Elementwise.h).
void geluBackwardKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs) {
  if (tanhApprox(attrs))
    binary("graph.gelu_backward", in, out,
           [](float x, float g) { return num::geluTanhGrad(x, g); });
  else
    binary("graph.gelu_backward", in, out,
           [](float x, float g) { return num::geluErfGrad(x, g); });
}

void siluBackwardKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &) {
  binary("graph.silu_backward", in, out,
         [](float x, float g) { return num::siluGrad(x, g); });
}
void leakyReluBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  float s = negativeSlope(attrs);
  binary("graph.leaky_relu_backward", in, out,
         [s](float x, float g) { return num::leakyReluGrad(x, g, s); });
}
void eluBackwardKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &attrs) {
  EluCoefs c = eluCoefs(attrs);
  binary("graph.elu_backward", in, out, [c](float x, float g) {
    return num::eluGrad(x, g, c.neg, c.pos, c.negInput);
  });
}
void softplusBackwardKernel(std::span<const TensorRef> in,
                            std::span<const TensorRef> out,
                            const Attrs &attrs) {
  float b = beta(attrs), t = threshold(attrs);
  binary("graph.softplus_backward", in, out,
         [b, t](float x, float g) { return num::softplusGrad(x, g, b, t); });
}
void clampBackwardKernel(std::span<const TensorRef> in,
                         std::span<const TensorRef> out, const Attrs &attrs) {
  float lo = lowerBound(attrs), hi = upperBound(attrs);
  binary("graph.clamp_backward", in, out,
         [lo, hi](float x, float g) { return num::clampGrad(x, g, lo, hi); });
}

// maximum_backward(a, b, g): three operands of the result's size.
void maximumBackwardKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.maximum_backward";
  const TensorRef &a = required(op, in, 0), &b = required(op, in, 1),
                  &g = required(op, in, 2), &y = required(op, out, 0);
  if (a.numel() != y.numel() || b.numel() != y.numel() ||
      g.numel() != y.numel())
    fail(op, "operand and result sizes differ");
  FloatIn fa(a), fb(b), fg(g);
  FloatOut r(y);
  for (int64_t i = 0, n = y.numel(); i < n; ++i)
    r[i] = num::maximumGrad(fa[i], fb[i], fg[i]);
  r.commit();
}

} // namespace ampc::cpu
