//===- Elementwise.cu - Elementwise ops, casts, dropout, shapes -----------===//
//
// One map kernel (the op is a run-time code, the dtypes are read per
// element) and one strided-copy kernel serve every op here: few
// instantiations, short nvcc times. Generated code fuses elementwise chains
// into its own kernels; these are the library fallbacks.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/numerics/Dropout.h"
#include "runtime/numerics/Elementwise.h"

#include <cstring>

namespace ampc::cuda {

using namespace detail;
using kernels::detail::SliceSpec;
using kernels::detail::sliceSpec;

namespace {

enum class Fn : int {
  Add, Sub, Mul, Div, Neg, Relu, Tanh, Sigmoid, Exp, Log, Sqrt, Rsqrt, Gelu,
  GeluTanh, Pow, Copy, ReluBackward, GeluBackward, GeluTanhBackward,
  Dropout
};

// Operand strides over the result's dimensions (0 where it broadcasts).
struct Map {
  Fn fn;
  int rank;
  int64_t dims[kMaxRank];
  int64_t sa[kMaxRank], sb[kMaxRank];
  const void *a, *b;
  int ta, tb;
  void *y;
  int ty;
  float param;       // pow's exponent, dropout's scale
  double p;          // dropout probability
  uint64_t streamKey; // dropout
  uint64_t maskBase;  // dropout: shard * numel (the global-batch index of i)
  // Dropout in a replayed graph: the step is read from the device (the key
  // is derived per thread from seed, *stepAt and key) instead of streamKey.
  const int64_t *stepAt;
  uint64_t seed, key;
};

__device__ float apply(const Map &m, float x, float g, int64_t i,
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
    int64_t ia = 0, ib = 0, rem = i;
    for (int d = m.rank - 1; d >= 0; --d) {
      int64_t c = rem % m.dims[d];
      rem /= m.dims[d];
      ia += c * m.sa[d];
      ib += c * m.sb[d];
    }
    float x = ld(m.a, m.ta, ia);
    float g = m.b ? ld(m.b, m.tb, ib) : 0.0f;
    st(m.y, m.ty, i, apply(m, x, g, i, streamKey));
  }
}

void launchMap(std::string_view op, Fn fn, std::span<const TensorRef> in,
               std::span<const TensorRef> out, cudaStream_t stream,
               float param = 0.0f) {
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
  int64_t n = y.numel();
  if (n == 0)
    return;
  mapKernel<<<gridFor(n), 256, 0, stream>>>(m, n);
  checkLaunch("mapKernel");
}

// y[i] (contiguous over |dims|) = x[base + sum c_d * s[d]], element size esz.
struct Copy {
  int rank;
  int64_t dims[kMaxRank], src[kMaxRank], dst[kMaxRank];
  const char *x;
  char *y;
  int esz;
};

__global__ void stridedCopyKernel(Copy c, int64_t n) {
  AMPC_GRID_STRIDE(i, n) {
    int64_t is = 0, id = 0, rem = i;
    for (int d = c.rank - 1; d >= 0; --d) {
      int64_t k = rem % c.dims[d];
      rem /= c.dims[d];
      is += k * c.src[d];
      id += k * c.dst[d];
    }
    switch (c.esz) {
    case 2:
      reinterpret_cast<uint16_t *>(c.y)[id] =
          reinterpret_cast<const uint16_t *>(c.x)[is];
      break;
    case 8:
      reinterpret_cast<uint64_t *>(c.y)[id] =
          reinterpret_cast<const uint64_t *>(c.x)[is];
      break;
    default:
      reinterpret_cast<uint32_t *>(c.y)[id] =
          reinterpret_cast<const uint32_t *>(c.x)[is];
    }
  }
}

void contiguousStrides(const TensorRef &t, int64_t *s) {
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    s[d] = stride;
    stride *= t.shape[d];
  }
}

// Copies the elements of the box |dims| from x (strides src, element offset
// xBase) to y (strides dst, offset yBase).
void stridedCopy(const TensorRef &like, const void *x, int64_t xBase,
                 const int64_t *src, void *y, int64_t yBase, const int64_t *dst,
                 const int64_t *dims, int rank, cudaStream_t stream) {
  Copy c{};
  c.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    c.dims[d] = dims[d], c.src[d] = src[d], c.dst[d] = dst[d];
    n *= dims[d];
  }
  c.esz = int(dtypeSize(like.dtype));
  c.x = static_cast<const char *>(x) + xBase * c.esz;
  c.y = static_cast<char *>(y) + yBase * c.esz;
  if (n == 0)
    return;
  stridedCopyKernel<<<gridFor(n), 256, 0, stream>>>(c, n);
  checkLaunch("stridedCopyKernel");
}

void sameType(std::string_view op, const TensorRef &a, const TensorRef &b) {
  if (a.dtype != b.dtype)
    fail(op, "operand and result element types differ");
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
#undef AMPC_MAP

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

void reshapeKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                   const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.reshape";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  sameType(op, x, y);
  if (x.numel() != y.numel())
    fail(op, "element counts differ");
  if (x.data != y.data)
    check(cudaMemcpyAsync(y.data, x.data,
                          size_t(x.numel()) * dtypeSize(x.dtype),
                          cudaMemcpyDeviceToDevice, stream),
          "reshape");
}

void transposeKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.transpose";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  sameType(op, x, y);
  auto perm = attrs.getInts("perm");
  if (int(perm.size()) != x.rank || y.rank != x.rank)
    fail(op, "perm must have one entry per dimension");
  int64_t xs[kMaxRank], ys[kMaxRank], ss[kMaxRank];
  contiguousStrides(x, xs);
  contiguousStrides(y, ys);
  for (int i = 0; i < x.rank; ++i) {
    if (perm[i] < 0 || perm[i] >= x.rank || y.shape[i] != x.shape[perm[i]])
      fail(op, "perm does not match the shapes");
    ss[i] = xs[perm[i]];
  }
  stridedCopy(x, x.data, 0, ss, y.data, 0, ys, y.shape, y.rank, stream);
}

void sliceKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.slice";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  sameType(op, x, y);
  SliceSpec s = sliceSpec(op, x, y, attrs);
  int64_t xs[kMaxRank], ys[kMaxRank], ss[kMaxRank], base = 0;
  contiguousStrides(x, xs);
  contiguousStrides(y, ys);
  for (int d = 0; d < x.rank; ++d) {
    base += s.starts[d] * xs[d];
    ss[d] = xs[d] * s.steps[d];
  }
  stridedCopy(x, x.data, base, ss, y.data, 0, ys, y.shape, y.rank, stream);
}

void sliceBackwardKernel(std::span<const TensorRef> in,
                         std::span<const TensorRef> out, const Attrs &attrs,
                         cudaStream_t stream) {
  constexpr std::string_view op = "graph.slice_backward";
  const TensorRef &g = required(op, in, 0), &dx = required(op, out, 0);
  sameType(op, g, dx);
  SliceSpec s = sliceSpec(op, dx, g, attrs);
  check(cudaMemsetAsync(dx.data, 0,
                        size_t(dx.numel()) * dtypeSize(dx.dtype), stream),
        "slice_backward");
  int64_t xs[kMaxRank], gs[kMaxRank], ds[kMaxRank], base = 0;
  contiguousStrides(dx, xs);
  contiguousStrides(g, gs);
  for (int d = 0; d < dx.rank; ++d) {
    base += s.starts[d] * xs[d];
    ds[d] = xs[d] * s.steps[d];
  }
  stridedCopy(g, g.data, 0, gs, dx.data, base, ds, g.shape, g.rank, stream);
}

void concatKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.concat";
  const TensorRef &y = required(op, out, 0);
  int axis = normAxis(op, attrs.getInt("axis"), y.rank);
  int64_t ys[kMaxRank], offset = 0;
  contiguousStrides(y, ys);
  for (const TensorRef &x : in) {
    sameType(op, x, y);
    if (x.rank != y.rank)
      fail(op, "operand ranks differ");
    int64_t xs[kMaxRank];
    contiguousStrides(x, xs);
    stridedCopy(x, x.data, 0, xs, y.data, offset * ys[axis], ys, x.shape,
                x.rank, stream);
    offset += x.shape[axis];
  }
  if (offset != y.shape[axis])
    fail(op, "result size along the axis is not the sum");
}

void broadcastToKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &,
                       cudaStream_t stream) {
  launchMap("graph.broadcast_to", Fn::Copy, in.first(1), out, stream);
}

} // namespace ampc::cuda
