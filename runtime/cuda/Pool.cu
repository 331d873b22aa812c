//===- Pool.cu - max and average pooling and their backward ---------------===//
//
// max_pool2d, avg_pool2d (count_include_pad) and their backward ops: one
// thread per output (forward) or per input element (backward, a gather:
// deterministic).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"

namespace ampc::cuda {

using namespace detail;

namespace {

// The shared geometry, checked by kernels::detail::poolGeometry.
using PoolGeom = kernels::detail::PoolGeometry;

// kind 0: max, 1: average (count_include_pad).
__global__ void poolKernel(PoolGeom g, const void *x, int tx, void *y, int ty,
                           int kind) {
  int64_t total = g.n * g.c * g.oh * g.ow;
  AMPC_GRID_STRIDE(i, total) {
    auto [nc, oy, ox] = pixelOf(i, g.oh, g.ow);
    float acc = kind == 0 ? -INFINITY : 0.0f;
    for (int64_t a = 0; a < g.kh; ++a)
      for (int64_t b = 0; b < g.kw; ++b) {
        int64_t iy = oy * g.sh - g.ph + a, ix = ox * g.sw - g.pw + b;
        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
          continue;
        float v = ld(x, tx, (nc * g.h + iy) * g.w + ix);
        if (kind == 0)
          acc = (v > acc || isnan(v)) ? v : acc;
        else
          acc += v;
      }
    st(y, ty, i, kind == 0 ? acc : acc / float(g.kh * g.kw));
  }
}

// dx of one input element: the sum over the windows that contain it of g
// (avg: g / window size; max: g when this element is the window's first
// maximum in row-major order).
__global__ void poolBackwardKernel(PoolGeom g, const void *x, int tx,
                                   const void *gy, int tg, void *dx, int tdx,
                                   int kind) {
  int64_t total = g.n * g.c * g.h * g.w;
  AMPC_GRID_STRIDE(i, total) {
    auto [nc, iy, ix] = pixelOf(i, g.h, g.w);
    float s = 0.0f;
    for (int64_t a = 0; a < g.kh; ++a) {
      int64_t ty = iy + g.ph - a;
      if (ty < 0 || ty % g.sh || ty / g.sh >= g.oh)
        continue;
      int64_t oy = ty / g.sh;
      for (int64_t b = 0; b < g.kw; ++b) {
        int64_t tx2 = ix + g.pw - b;
        if (tx2 < 0 || tx2 % g.sw || tx2 / g.sw >= g.ow)
          continue;
        int64_t ox = tx2 / g.sw;
        float gv = ld(gy, tg, (nc * g.oh + oy) * g.ow + ox);
        if (kind == 1) {
          s += gv / float(g.kh * g.kw);
          continue;
        }
        // The window's first maximum (row-major).
        int64_t bestY = -1, bestX = -1;
        float best = -INFINITY;
        for (int64_t p = 0; p < g.kh; ++p)
          for (int64_t q = 0; q < g.kw; ++q) {
            int64_t yy = oy * g.sh - g.ph + p, xx = ox * g.sw - g.pw + q;
            if (yy < 0 || yy >= g.h || xx < 0 || xx >= g.w)
              continue;
            float v = ld(x, tx, (nc * g.h + yy) * g.w + xx);
            // As the CPU's argmaxWindow: every NaN takes over.
            if (bestY < 0 || v > best || isnan(v)) {
              best = v;
              bestY = yy;
              bestX = xx;
            }
          }
        if (bestY == iy && bestX == ix)
          s += gv;
      }
    }
    st(dx, tdx, i, s);
  }
}

} // namespace

void maxPool2dKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.max_pool2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  PoolGeom g = kernels::detail::poolGeometry(op, x, y, attrs);
  poolKernel<<<gridFor(y.numel()), 256, 0, stream>>>(g, x.data, int(x.dtype),
                                                     y.data, int(y.dtype), 0);
  checkLaunch(op.data());
}

void avgPool2dKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.avg_pool2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  PoolGeom g = kernels::detail::poolGeometry(op, x, y, attrs);
  poolKernel<<<gridFor(y.numel()), 256, 0, stream>>>(g, x.data, int(x.dtype),
                                                     y.data, int(y.dtype), 1);
  checkLaunch(op.data());
}

// in: x, g; out: dx.
void maxPool2dBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.max_pool2d_backward";
  const TensorRef &x = required(op, in, 0), &gy = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  PoolGeom g = kernels::detail::poolGeometry(op, x, gy, attrs, &dx);
  poolBackwardKernel<<<gridFor(dx.numel()), 256, 0, stream>>>(
      g, x.data, int(x.dtype), gy.data, int(gy.dtype), dx.data,
      int(dx.dtype), 0);
  checkLaunch(op.data());
}

// in: g; out: dx (its shape gives the input's).
void avgPool2dBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.avg_pool2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  PoolGeom g = kernels::detail::poolGeometry(op, dx, gy, attrs);
  poolBackwardKernel<<<gridFor(dx.numel()), 256, 0, stream>>>(
      g, nullptr, 0, gy.data, int(gy.dtype), dx.data, int(dx.dtype), 1);
  checkLaunch(op.data());
}

} // namespace ampc::cuda
