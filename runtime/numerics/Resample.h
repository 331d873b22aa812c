//===- Resample.h - Index maps of adaptive pooling and nearest upsampling -===//
//
// The one definition of which input rows (columns) an output row reads, for
// graph.adaptive_avg_pool2d and graph.upsample_nearest2d, shared by the
// interpreter, runtime/cpu and runtime/cuda so the three agree exactly.
// Both follow aten (AdaptivePooling.h, UpSample.h).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_RESAMPLE_H
#define AMPC_RUNTIME_NUMERICS_RESAMPLE_H

#include "runtime/numerics/HostDevice.h"

#include <cmath>
#include <cstdint>

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

// The output size F.interpolate gives for a scale_factor: floor(in * scale).
inline int64_t nearestOutputSize(int64_t in, double scale) {
  return int64_t(std::floor(double(in) * scale));
}

} // namespace ampc::numerics

#endif
