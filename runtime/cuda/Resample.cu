//===- Resample.cu - adaptive pooling, nearest/bilinear upsampling (NCHW) -===//
//
// One thread per output (forward) or per input element (backward, a gather
// over the outputs that read it: deterministic, and in the CPU kernel's
// order of accumulation, so the float sums agree). Compiled with
// --fmad=false (CMakeLists.txt): bilinear's products and sums stay separate
// IEEE operations, as in the CPU kernels, so the bits agree.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/kernels/ResampleGeometry.h"

namespace ampc::cuda {

using namespace detail;
using kernels::detail::ResampleGeometry;
using numerics::adaptiveAverage;
using numerics::adaptiveEnd;
using numerics::adaptiveStart;
using numerics::nearestSource;

namespace {

__global__ void adaptiveKernel(ResampleGeometry g, const void *x, int tx,
                               void *y, int ty) {
  AMPC_GRID_STRIDE(i, g.planes * g.oh * g.ow) {
    auto [p, a, b] = pixelOf(i, g.oh, g.ow);
    int64_t y0 = adaptiveStart(a, g.h, g.oh), y1 = adaptiveEnd(a, g.h, g.oh);
    int64_t x0 = adaptiveStart(b, g.w, g.ow), x1 = adaptiveEnd(b, g.w, g.ow);
    float sum = 0.0f;
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix)
        sum += ld(x, tx, (p * g.h + iy) * g.w + ix);
    st(y, ty, i,
       adaptiveAverage(sum, y1 - y0, x1 - x0, g.oh == 1 && g.ow == 1));
  }
}

// The outputs whose windows hold input |i| of |in|: those o with
// start(o) <= i < end(o), all within (i*out/in - 1, (i+1)*out/in).
__device__ void adaptiveRange(int64_t i, int64_t in, int64_t out,
                              int64_t &lo, int64_t &hi) {
  lo = i * out / in - 1;
  lo = lo < 0 ? 0 : lo;
  hi = ((i + 1) * out + in - 1) / in;
  hi = hi > out - 1 ? out - 1 : hi;
}

__global__ void adaptiveBackwardKernel(ResampleGeometry g, const void *gy,
                                       int tg, void *dx, int tdx) {
  AMPC_GRID_STRIDE(i, g.planes * g.h * g.w) {
    auto [p, iy, ix] = pixelOf(i, g.h, g.w);
    int64_t alo, ahi, blo, bhi;
    adaptiveRange(iy, g.h, g.oh, alo, ahi);
    adaptiveRange(ix, g.w, g.ow, blo, bhi);
    float s = 0.0f;
    for (int64_t a = alo; a <= ahi; ++a) {
      int64_t y0 = adaptiveStart(a, g.h, g.oh), y1 = adaptiveEnd(a, g.h, g.oh);
      if (iy < y0 || iy >= y1)
        continue;
      for (int64_t b = blo; b <= bhi; ++b) {
        int64_t x0 = adaptiveStart(b, g.w, g.ow),
                x1 = adaptiveEnd(b, g.w, g.ow);
        if (ix < x0 || ix >= x1)
          continue;
        s += adaptiveAverage(ld(gy, tg, (p * g.oh + a) * g.ow + b), y1 - y0,
                             x1 - x0, g.oh == 1 && g.ow == 1);
      }
    }
    st(dx, tdx, i, s);
  }
}

__global__ void nearestKernel(ResampleGeometry g, const void *x, int tx,
                              void *y, int ty) {
  AMPC_GRID_STRIDE(i, g.planes * g.oh * g.ow) {
    auto [p, a, b] = pixelOf(i, g.oh, g.ow);
    int64_t sy = nearestSource(a, g.h, g.oh, g.stepH);
    int64_t sx = nearestSource(b, g.w, g.ow, g.stepW);
    st(y, ty, i, ld(x, tx, (p * g.h + sy) * g.w + sx));
  }
}

// The first output index that reads input |i| or a later one (the source
// index never decreases along the output).
__device__ int64_t firstReader(int64_t i, int64_t in, int64_t out,
                               float step) {
  int64_t lo = 0, hi = out;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (nearestSource(mid, in, out, step) < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

__global__ void nearestBackwardKernel(ResampleGeometry g, const void *gy,
                                      int tg, void *dx, int tdx) {
  AMPC_GRID_STRIDE(i, g.planes * g.h * g.w) {
    auto [p, iy, ix] = pixelOf(i, g.h, g.w);
    int64_t a0 = firstReader(iy, g.h, g.oh, g.stepH);
    int64_t b0 = firstReader(ix, g.w, g.ow, g.stepW);
    float s = 0.0f;
    for (int64_t a = a0; a < g.oh && nearestSource(a, g.h, g.oh, g.stepH) == iy;
         ++a)
      for (int64_t b = b0;
           b < g.ow && nearestSource(b, g.w, g.ow, g.stepW) == ix; ++b)
        s += ld(gy, tg, (p * g.oh + a) * g.ow + b);
    st(dx, tdx, i, s);
  }
}

using numerics::BilinearTap;
using numerics::bilinearTap;

__global__ void bilinearKernel(ResampleGeometry g, const void *x, int tx,
                               void *y, int ty) {
  AMPC_GRID_STRIDE(i, g.planes * g.oh * g.ow) {
    auto [p, a, b] = pixelOf(i, g.oh, g.ow);
    BilinearTap r = bilinearTap(a, g.h, g.oh, g.stepH, g.alignCorners);
    BilinearTap c = bilinearTap(b, g.w, g.ow, g.stepW, g.alignCorners);
    int64_t base = p * g.h * g.w;
    st(y, ty, i,
       numerics::bilinearValue(ld(x, tx, base + r.i0 * g.w + c.i0),
                               ld(x, tx, base + r.i0 * g.w + c.i1),
                               ld(x, tx, base + r.i1 * g.w + c.i0),
                               ld(x, tx, base + r.i1 * g.w + c.i1), r.w0, r.w1,
                               c.w0, c.w1));
  }
}

// The first output index whose taps may reach input |i| or a later one
// (i0 never decreases along the output, and i1 <= i0 + 1).
__device__ int64_t firstBilinearReader(int64_t i, int64_t in, int64_t out,
                                       float step, bool corners) {
  int64_t lo = 0, hi = out;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (bilinearTap(mid, in, out, step, corners).i0 < i - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Gathers, per input element, the weighted g of every output tap that reads
// it: outputs in order, taps in the order r0c0, r0c1, r1c0, r1c1, so the
// float sum is the CPU kernel's.
__global__ void bilinearBackwardKernel(ResampleGeometry g, const void *gy,
                                       int tg, void *dx, int tdx) {
  AMPC_GRID_STRIDE(i, g.planes * g.h * g.w) {
    auto [p, iy, ix] = pixelOf(i, g.h, g.w);
    int64_t a0 = firstBilinearReader(iy, g.h, g.oh, g.stepH, g.alignCorners);
    int64_t b0 = firstBilinearReader(ix, g.w, g.ow, g.stepW, g.alignCorners);
    float s = 0.0f;
    for (int64_t a = a0; a < g.oh; ++a) {
      BilinearTap r = bilinearTap(a, g.h, g.oh, g.stepH, g.alignCorners);
      if (r.i0 > iy)
        break;
      for (int64_t b = b0; b < g.ow; ++b) {
        BilinearTap c = bilinearTap(b, g.w, g.ow, g.stepW, g.alignCorners);
        if (c.i0 > ix)
          break;
        float v = ld(gy, tg, (p * g.oh + a) * g.ow + b);
        const int64_t rows[2] = {r.i0, r.i1}, cols[2] = {c.i0, c.i1};
        const float rw[2] = {r.w0, r.w1}, cw[2] = {c.w0, c.w1};
        for (int u = 0; u < 2; ++u)
          for (int t = 0; t < 2; ++t)
            if (rows[u] == iy && cols[t] == ix)
              s += rw[u] * cw[t] * v;
      }
    }
    st(dx, tdx, i, s);
  }
}

} // namespace

void adaptiveAvgPool2dKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out, const Attrs &,
                             cudaStream_t stream) {
  constexpr std::string_view op = "graph.adaptive_avg_pool2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  ResampleGeometry g = kernels::detail::resampleGeometry(op, x, y);
  adaptiveKernel<<<gridFor(y.numel()), 256, 0, stream>>>(
      g, x.data, int(x.dtype), y.data, int(y.dtype));
  checkLaunch(op.data());
}

// in: g; out: dx (its shape gives the input's).
void adaptiveAvgPool2dBackwardKernel(std::span<const TensorRef> in,
                                     std::span<const TensorRef> out,
                                     const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.adaptive_avg_pool2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  ResampleGeometry g = kernels::detail::resampleGeometry(op, dx, gy);
  adaptiveBackwardKernel<<<gridFor(dx.numel()), 256, 0, stream>>>(
      g, gy.data, int(gy.dtype), dx.data, int(dx.dtype));
  checkLaunch(op.data());
}

void upsampleNearest2dKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.upsample_nearest2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  ResampleGeometry g = kernels::detail::nearestGeometry(op, x, y, attrs);
  nearestKernel<<<gridFor(y.numel()), 256, 0, stream>>>(
      g, x.data, int(x.dtype), y.data, int(y.dtype));
  checkLaunch(op.data());
}

// in: g; out: dx.
void upsampleNearest2dBackwardKernel(std::span<const TensorRef> in,
                                     std::span<const TensorRef> out,
                                     const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.upsample_nearest2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  ResampleGeometry g = kernels::detail::nearestGeometry(op, dx, gy, attrs);
  nearestBackwardKernel<<<gridFor(dx.numel()), 256, 0, stream>>>(
      g, gy.data, int(gy.dtype), dx.data, int(dx.dtype));
  checkLaunch(op.data());
}

void upsampleBilinear2dKernel(std::span<const TensorRef> in,
                              std::span<const TensorRef> out,
                              const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.upsample_bilinear2d";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  ResampleGeometry g = kernels::detail::bilinearGeometry(op, x, y, attrs);
  bilinearKernel<<<gridFor(y.numel()), 256, 0, stream>>>(
      g, x.data, int(x.dtype), y.data, int(y.dtype));
  checkLaunch(op.data());
}

// in: g; out: dx.
void upsampleBilinear2dBackwardKernel(std::span<const TensorRef> in,
                                      std::span<const TensorRef> out,
                                      const Attrs &attrs,
                                      cudaStream_t stream) {
  constexpr std::string_view op = "graph.upsample_bilinear2d_backward";
  const TensorRef &gy = required(op, in, 0), &dx = required(op, out, 0);
  ResampleGeometry g = kernels::detail::bilinearGeometry(op, dx, gy, attrs);
  bilinearBackwardKernel<<<gridFor(dx.numel()), 256, 0, stream>>>(
      g, gy.data, int(gy.dtype), dx.data, int(dx.dtype));
  checkLaunch(op.data());
}

} // namespace ampc::cuda
