//===- Resample.h - Index maps of adaptive pooling and upsampling ---------===//
//
// The one definition of which input rows (columns) an output row reads, for
// graph.adaptive_avg_pool2d, graph.upsample_nearest2d and
// graph.upsample_bilinear2d, shared by the
// interpreter, runtime/cpu and runtime/cuda so the three agree exactly.
// Both follow aten (AdaptivePooling.h, UpSample.h).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_RESAMPLE_H
#define AMPC_RUNTIME_NUMERICS_RESAMPLE_H

#include "runtime/numerics/HostDevice.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ampc::numerics {

// Adaptive pooling: output i of |out| averages input [start, end) of |in|,
// start = floor(i * in / out), end = ceil((i + 1) * in / out).
AMPC_HD inline int64_t adaptiveStart(int64_t i, int64_t in, int64_t out) {
  return (i * in) / out;
}
AMPC_HD inline int64_t adaptiveEnd(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

// A window's average (or its share of a cotangent |v|) as aten computes it:
// v / kh / kw, except for a 1x1 output (|global|), where aten takes the
// mean over H and W instead: v / (kh * kw).
AMPC_HD inline float adaptiveAverage(float v, int64_t kh, int64_t kw,
                                     bool global) {
  return global ? v / float(kh * kw) : v / float(kh) / float(kw);
}

// Nearest upsampling's step: float(1 / scale) when the op was given a scale
// (F.interpolate's scale_factor; |scale| <= 0 means none), else in / out in
// float, as aten's compute_scales_value<float>.
AMPC_HD inline float nearestStep(int64_t in, int64_t out, double scale) {
  return scale > 0 ? float(1.0 / scale) : float(in) / float(out);
}

// The input index output |dst| reads: aten's nearest_idx (its exact
// same-size and 2x shortcuts included), min(floor(dst * step), in - 1).
AMPC_HD inline int64_t nearestSource(int64_t dst, int64_t in, int64_t out,
                                     float step) {
  if (out == in)
    return dst;
  if (out == 2 * in)
    return dst >> 1;
  int64_t s = int64_t(floorf(float(dst) * step));
  return s < in - 1 ? s : in - 1;
}

// Bilinear upsampling (aten's upsample_bilinear2d, UpSample.h): the step
// of the source coordinate per output index, area_pixel_compute_scale<float>:
// with |alignCorners|, (in - 1) / (out - 1) (0 for one output); else
// float(1 / scale) when a scale was given (|scale| > 0), else in / out.
AMPC_HD inline float bilinearStep(int64_t in, int64_t out, bool alignCorners,
                                  double scale) {
  if (alignCorners)
    return out > 1 ? float(in - 1) / float(out - 1) : 0.0f;
  return nearestStep(in, out, scale);
}

// The two source indices output |dst| reads and their weights, as aten's
// compute_source_index_and_lambda: an unchanged size copies; else the source
// coordinate is step * dst (align corners) or step * (dst + 0.5) - 0.5
// clamped at 0, i0 its floor (at most in - 1), i1 = i0 + 1 unless i0 is the
// last row, w1 the fraction clamped to [0, 1] and w0 = 1 - w1.
struct BilinearTap {
  int64_t i0, i1;
  float w0, w1;
};
AMPC_HD inline BilinearTap bilinearTap(int64_t dst, int64_t in, int64_t out,
                                       float step, bool alignCorners) {
  if (out == in)
    return {dst, dst, 1.0f, 0.0f};
  float src =
      alignCorners ? step * float(dst) : step * (float(dst) + 0.5f) - 0.5f;
  src = src < 0.0f ? 0.0f : src;
  int64_t i0 = int64_t(floorf(src));
  i0 = i0 < in - 1 ? i0 : in - 1;
  float w1 = src - float(i0);
  w1 = w1 < 0.0f ? 0.0f : (w1 > 1.0f ? 1.0f : w1);
  return {i0, i0 < in - 1 ? i0 + 1 : i0, 1.0f - w1, w1};
}

// The taps of every output index 0 .. out - 1 (host code: the CPU kernels
// and the interpreter build them once per op).
inline std::vector<BilinearTap> bilinearTaps(int64_t in, int64_t out,
                                             float step, bool alignCorners) {
  std::vector<BilinearTap> taps;
  for (int64_t i = 0; i < out; ++i)
    taps.push_back(bilinearTap(i, in, out, step, alignCorners));
  return taps;
}

// One output of four inputs (a = [r0][c0], b = [r0][c1], c = [r1][c0],
// d = [r1][c1]) in aten's order of float operations.
template <class T>
AMPC_HD inline T bilinearValue(T a, T b, T c, T d, T h0, T h1, T w0, T w1) {
  return h0 * (w0 * a + w1 * b) + h1 * (w0 * c + w1 * d);
}

// The output size F.interpolate gives for a scale_factor: floor(in * scale).
inline int64_t nearestOutputSize(int64_t in, double scale) {
  return int64_t(std::floor(double(in) * scale));
}

} // namespace ampc::numerics

#endif
