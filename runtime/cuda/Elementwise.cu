//===- Elementwise.cu - Elementwise ops, casts, dropout, their backward ---===//
//
// One map kernel serves every op here (the op is a run-time code, the dtypes
// are read per element): few instantiations, short nvcc times. The scalar
// formulas are runtime/numerics/Elementwise.h's. Generated code fuses
// elementwise chains into its own kernels; these are the library fallbacks.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/numerics/Dropout.h"
#include "runtime/numerics/Elementwise.h"

namespace ampc::cuda {

using namespace detail;

namespace {

enum class Fn : int {
  Add, Sub, Mul, Div, Neg, Relu, Tanh, Sigmoid, Exp, Log, Sqrt, Rsqrt, Gelu,
  GeluTanh, Pow, Copy, ReluBackward, GeluBackward, GeluTanhBackward,
  Dropout, Maximum, Minimum, Silu, Abs, Erf, Sin, Cos, Reciprocal, LeakyRelu,
  Softplus, Clamp, SiluBackward, LeakyReluBackward, SoftplusBackward,
  ClampBackward, MaximumBackward, Where, MaskedFill, Elu, EluBackward
};

// Operand strides over the result's dimensions (0 where it broadcasts).
struct Map {
  Fn fn;
  int rank;
  int64_t dims[kMaxRank];
  int64_t sa[kMaxRank], sb[kMaxRank], sc[kMaxRank];
  const void *a, *b;
  int ta, tb;
  const void *c; // a third operand: maximum_backward's g, where's y
  int tc;
  void *y;
  int ty;
  float param;       // pow's exponent, dropout's scale, leaky_relu's slope,
                     // softplus's beta, clamp's lower bound
  float param2;      // softplus's threshold, clamp's upper bound, elu's
                     // positive coefficient
  float param3;      // elu's input scale
  double p;          // dropout probability
  uint64_t streamKey; // dropout
  uint64_t maskBase;  // dropout: shard * numel (the global-batch index of i)
  // Dropout in a replayed graph: the step is read from the device (the key
  // is derived per thread from seed, *stepAt and key) instead of streamKey.
  const int64_t *stepAt;
  uint64_t seed, key;
};

__device__ float apply(const Map &m, float x, float g, float h, int64_t i,
                       uint64_t streamKey) {
  switch (m.fn) {
  case Fn::Add: return x + g;
  case Fn::Sub: return x - g;
  case Fn::Mul: return x * g;
  case Fn::Div: return x / g;
  case Fn::Neg: return -x;
  case Fn::Relu: return num::relu(x);
  case Fn::Tanh: return tanhf(x);
  case Fn::Sigmoid: return num::sigmoid(x);
  case Fn::Exp: return expf(x);
  case Fn::Log: return logf(x);
  case Fn::Sqrt: return sqrtf(x);
  case Fn::Rsqrt: return num::rsqrt(x);
  case Fn::Gelu: return num::geluErf(x);
  case Fn::GeluTanh: return num::geluTanh(x);
  case Fn::Pow: return num::power(x, m.param);
  case Fn::Copy: return x;
  case Fn::ReluBackward: return num::reluGrad(x, g);
  case Fn::GeluBackward: return num::geluErfGrad(x, g);
  case Fn::GeluTanhBackward: return num::geluTanhGrad(x, g);
  case Fn::Maximum: return num::maximum(x, g);
  case Fn::Minimum: return num::minimum(x, g);
  case Fn::Silu: return num::silu(x);
  case Fn::Abs: return fabsf(x);
  case Fn::Erf: return erff(x);
  case Fn::Sin: return sinf(x);
  case Fn::Cos: return cosf(x);
  case Fn::Reciprocal: return 1.0f / x;
  case Fn::LeakyRelu: return num::leakyRelu(x, m.param);
  case Fn::Softplus: return num::softplus(x, m.param, m.param2);
  case Fn::Clamp: return num::clamp(x, m.param, m.param2);
  case Fn::SiluBackward: return num::siluGrad(x, g);
  case Fn::LeakyReluBackward: return num::leakyReluGrad(x, g, m.param);
  case Fn::SoftplusBackward:
    return num::softplusGrad(x, g, m.param, m.param2);
  case Fn::ClampBackward: return num::clampGrad(x, g, m.param, m.param2);
  case Fn::MaximumBackward: return num::maximumGrad(x, g, h);
  // x is the (integer) condition or mask, read as a float: nonzero is true.
  case Fn::Where: return x != 0.0f ? g : h;
  case Fn::MaskedFill: return x != 0.0f ? m.param : g;
  case Fn::Elu: return num::elu(x, m.param, m.param2, m.param3);
  case Fn::EluBackward:
    return num::eluGrad(x, g, m.param, m.param2, m.param3);
  case Fn::Dropout:
    if (m.p <= 0.0)
      return x;
    return num::dropoutKeep(streamKey, m.maskBase + uint64_t(i), m.p)
               ? x * m.param
               : 0.0f;
  }
  return x;
}

__global__ void mapKernel(Map m, int64_t n) {
  uint64_t streamKey = m.stepAt ? num::dropoutStreamKey(m.seed, uint64_t(*m.stepAt), m.key)
                                : m.streamKey;
  AMPC_GRID_STRIDE(i, n) {
    int64_t ia = 0, ib = 0, ic = 0, rem = i;
    for (int d = m.rank - 1; d >= 0; --d) {
      int64_t c = rem % m.dims[d];
      rem /= m.dims[d];
      ia += c * m.sa[d];
      ib += c * m.sb[d];
      ic += c * m.sc[d];
    }
    float x = ld(m.a, m.ta, ia);
    float g = m.b ? ld(m.b, m.tb, ib) : 0.0f;
    float h = m.c ? ld(m.c, m.tc, ic) : 0.0f;
    st(m.y, m.ty, i, apply(m, x, g, h, i, streamKey));
  }
}

void launchMap(std::string_view op, Fn fn, std::span<const TensorRef> in,
               std::span<const TensorRef> out, cudaStream_t stream,
               float param = 0.0f, float param2 = 0.0f,
               float param3 = 0.0f) {
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef *g = in.size() > 1 ? &required(op, in, 1) : nullptr;
  Map m{};
  m.fn = fn;
  m.rank = y.rank;
  for (int d = 0; d < y.rank; ++d)
    m.dims[d] = y.shape[d];
  // An operand with the result's element count is read flat.
  broadcastStrides(op, x.numel() == y.numel() ? y : x, y, m.sa);
  if (g)
    broadcastStrides(op, g->numel() == y.numel() ? y : *g, y, m.sb);
  m.a = x.data, m.ta = int(x.dtype);
  m.b = g ? g->data : nullptr, m.tb = g ? int(g->dtype) : 0;
  m.y = y.data, m.ty = int(y.dtype);
  m.param = param;
  m.param2 = param2;
  m.param3 = param3;
  if (in.size() > 2) {
    const TensorRef &h = required(op, in, 2);
    broadcastStrides(op, h.numel() == y.numel() ? y : h, y, m.sc);
    m.c = h.data, m.tc = int(h.dtype);
  }
  int64_t n = y.numel();
  if (n == 0)
    return;
  mapKernel<<<gridFor(n), 256, 0, stream>>>(m, n);
  checkLaunch("mapKernel");
}

} // namespace

#define AMPC_MAP(kernel, name, fn)                                             \
  void kernel(std::span<const TensorRef> in, std::span<const TensorRef> out,   \
              const Attrs &, cudaStream_t stream) {                            \
    launchMap(name, fn, in, out, stream);                                      \
  }
AMPC_MAP(addKernel, "graph.add", Fn::Add)
AMPC_MAP(subKernel, "graph.sub", Fn::Sub)
AMPC_MAP(mulKernel, "graph.mul", Fn::Mul)
AMPC_MAP(divKernel, "graph.div", Fn::Div)
AMPC_MAP(negKernel, "graph.neg", Fn::Neg)
AMPC_MAP(reluKernel, "graph.relu", Fn::Relu)
AMPC_MAP(tanhKernel, "graph.tanh", Fn::Tanh)
AMPC_MAP(sigmoidKernel, "graph.sigmoid", Fn::Sigmoid)
AMPC_MAP(expKernel, "graph.exp", Fn::Exp)
AMPC_MAP(logKernel, "graph.log", Fn::Log)
AMPC_MAP(sqrtKernel, "graph.sqrt", Fn::Sqrt)
AMPC_MAP(rsqrtKernel, "graph.rsqrt", Fn::Rsqrt)
AMPC_MAP(castKernel, "graph.cast", Fn::Copy)
AMPC_MAP(reluBackwardKernel, "graph.relu_backward", Fn::ReluBackward)
AMPC_MAP(maximumKernel, "graph.maximum", Fn::Maximum)
AMPC_MAP(minimumKernel, "graph.minimum", Fn::Minimum)
AMPC_MAP(siluKernel, "graph.silu", Fn::Silu)
AMPC_MAP(absKernel, "graph.abs", Fn::Abs)
AMPC_MAP(erfKernel, "graph.erf", Fn::Erf)
AMPC_MAP(sinKernel, "graph.sin", Fn::Sin)
AMPC_MAP(cosKernel, "graph.cos", Fn::Cos)
AMPC_MAP(reciprocalKernel, "graph.reciprocal", Fn::Reciprocal)
AMPC_MAP(siluBackwardKernel, "graph.silu_backward", Fn::SiluBackward)
AMPC_MAP(maximumBackwardKernel, "graph.maximum_backward", Fn::MaximumBackward)
#undef AMPC_MAP

// where(c, x, y): the map's operands a = c, b = x, c = y, all broadcast.
void whereKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &, cudaStream_t stream) {
  launchMap("graph.where", Fn::Where, in, out, stream);
}

// masked_fill(x, mask): the map reads a = mask, b = x.
void maskedFillKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream) {
  constexpr std::string_view op = "graph.masked_fill";
  const TensorRef swapped[2] = {required(op, in, 1), required(op, in, 0)};
  launchMap(op, Fn::MaskedFill, swapped, out, stream,
            float(attrs.getFloat("value")));
}

// Attribute defaults as in dialects/Graph/GraphOps.td.
static float negativeSlope(const Attrs &attrs) {
  return float(attrs.getFloat("negative_slope", 0.01));
}
static float lowerBound(const Attrs &attrs) {
  return attrs.has("min") ? float(attrs.getFloat("min")) : -INFINITY;
}
static float upperBound(const Attrs &attrs) {
  return attrs.has("max") ? float(attrs.getFloat("max")) : INFINITY;
}

// elu's coefficients as PyTorch's kernel forms them, in float: alpha *
// scale, scale, input_scale.
static void launchElu(std::string_view op, Fn fn,
                      std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs,
                      cudaStream_t stream) {
  float scale = float(attrs.getFloat("scale", 1.0));
  float alpha = float(attrs.getFloat("alpha", 1.0));
  launchMap(op, fn, in, out, stream, alpha * scale, scale,
            float(attrs.getFloat("input_scale", 1.0)));
}
void eluKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &attrs, cudaStream_t stream) {
  launchElu("graph.elu", Fn::Elu, in.first(1), out, attrs, stream);
}
void eluBackwardKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &attrs,
                       cudaStream_t stream) {
  launchElu("graph.elu_backward", Fn::EluBackward, in, out, attrs, stream);
}

void leakyReluKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  launchMap("graph.leaky_relu", Fn::LeakyRelu, in.first(1), out, stream,
            negativeSlope(attrs));
}
void leakyReluBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  launchMap("graph.leaky_relu_backward", Fn::LeakyReluBackward, in, out,
            stream, negativeSlope(attrs));
}
void softplusKernel(std::span<const TensorRef> in,
                    std::span<const TensorRef> out, const Attrs &attrs,
                    cudaStream_t stream) {
  launchMap("graph.softplus", Fn::Softplus, in.first(1), out, stream,
            float(attrs.getFloat("beta", 1.0)),
            float(attrs.getFloat("threshold", 20.0)));
}
void softplusBackwardKernel(std::span<const TensorRef> in,
                            std::span<const TensorRef> out,
                            const Attrs &attrs, cudaStream_t stream) {
  launchMap("graph.softplus_backward", Fn::SoftplusBackward, in, out, stream,
            float(attrs.getFloat("beta", 1.0)),
            float(attrs.getFloat("threshold", 20.0)));
}
void clampKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &attrs, cudaStream_t stream) {
  launchMap("graph.clamp", Fn::Clamp, in.first(1), out, stream,
            lowerBound(attrs), upperBound(attrs));
}
void clampBackwardKernel(std::span<const TensorRef> in,
                         std::span<const TensorRef> out, const Attrs &attrs,
                         cudaStream_t stream) {
  launchMap("graph.clamp_backward", Fn::ClampBackward, in, out, stream,
            lowerBound(attrs), upperBound(attrs));
}

void geluKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                const Attrs &attrs, cudaStream_t stream) {
  bool t = attrs.getString("approximate", "none") == "tanh";
  launchMap("graph.gelu", t ? Fn::GeluTanh : Fn::Gelu, in, out, stream);
}

void geluBackwardKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs,
                        cudaStream_t stream) {
  bool t = attrs.getString("approximate", "none") == "tanh";
  launchMap("graph.gelu_backward",
            t ? Fn::GeluTanhBackward : Fn::GeluBackward, in, out, stream);
}

void powKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
               const Attrs &attrs, cudaStream_t stream) {
  float e = float(attrs.getFloat("exponent"));
  launchMap("graph.pow", Fn::Pow, in.first(1), out, stream, e);
}

// Attributes p, key, seed, step and shard (as runtime/cpu: element i draws
// mask index shard * numel + i). Generated code also passes step_at, the
// device address of the current step, so that a step captured in a CUDA
// graph draws new masks on every replay (see the CUDA emitter).
void dropoutKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs,
                   cudaStream_t stream) {
  constexpr std::string_view op = "graph.dropout";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  double p = attrs.getFloat("p");
  Map m{};
  m.fn = Fn::Dropout;
  m.rank = 1;
  m.dims[0] = y.numel();
  m.sa[0] = 1;
  m.a = x.data, m.ta = int(x.dtype), m.y = y.data, m.ty = int(y.dtype);
  m.p = p;
  m.param = p >= 1.0 ? 0.0f : float(1.0 / (1.0 - p));
  m.streamKey = num::dropoutStreamKey(uint64_t(attrs.getInt("seed", 0)),
                                      uint64_t(attrs.getInt("step", 0)),
                                      uint64_t(attrs.getInt("key", 0)));
  m.maskBase = uint64_t(attrs.getInt("shard", 0)) * uint64_t(y.numel());
  m.stepAt = reinterpret_cast<const int64_t *>(intptr_t(attrs.getInt("step_at", 0)));
  m.seed = uint64_t(attrs.getInt("seed", 0));
  m.key = uint64_t(attrs.getInt("key", 0));
  if (p >= 1.0)
    m.p = 2.0; // every uniform draw is < 2: all dropped
  int64_t n = y.numel();
  if (n)
    mapKernel<<<gridFor(n), 256, 0, stream>>>(m, n);
  checkLaunch("dropout");
}

} // namespace ampc::cuda
