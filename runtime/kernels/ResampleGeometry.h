//===- ResampleGeometry.h - Operand checks of the resampling ops -*- C++ -*-===//
//
// adaptive_avg_pool2d, upsample_nearest2d, upsample_bilinear2d and their
// backward ops take x [N, C, H, W] and y [N, C, OH, OW] (for the backward
// ops: dx and g); shared by runtime/cpu and runtime/cuda (plain host C++,
// plain data).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_RESAMPLEGEOMETRY_H
#define AMPC_RUNTIME_KERNELS_RESAMPLEGEOMETRY_H

#include "runtime/kernels/Geometry.h"
#include "runtime/numerics/Resample.h"

namespace ampc::kernels::detail {

struct ResampleGeometry {
  int64_t planes, h, w, oh, ow;
  // The upsampling ops' row and column steps (numerics::nearestStep,
  // numerics::bilinearStep).
  float stepH = 0, stepW = 0;
  bool alignCorners = false; // upsample_bilinear2d's align_corners
};

inline ResampleGeometry resampleGeometry(std::string_view op,
                                         const TensorRef &x,
                                         const TensorRef &y) {
  if (x.rank != 4 || y.rank != 4 || x.shape[0] != y.shape[0] ||
      x.shape[1] != y.shape[1] || y.shape[2] < 1 || y.shape[3] < 1)
    fail(op, "expected [N,C,H,W] -> [N,C,OH,OW]");
  return {x.shape[0] * x.shape[1], x.shape[2], x.shape[3], y.shape[2],
          y.shape[3]};
}

// With the steps of scales_h / scales_w (absent: the size ratio).
inline ResampleGeometry nearestGeometry(std::string_view op,
                                        const TensorRef &x,
                                        const TensorRef &y,
                                        const Attrs &attrs) {
  ResampleGeometry g = resampleGeometry(op, x, y);
  g.stepH = numerics::nearestStep(g.h, g.oh, attrs.getFloat("scales_h", 0.0));
  g.stepW = numerics::nearestStep(g.w, g.ow, attrs.getFloat("scales_w", 0.0));
  return g;
}

// upsample_bilinear2d's: the steps of numerics::bilinearStep.
inline ResampleGeometry bilinearGeometry(std::string_view op,
                                         const TensorRef &x,
                                         const TensorRef &y,
                                         const Attrs &attrs) {
  ResampleGeometry g = resampleGeometry(op, x, y);
  g.alignCorners = attrs.getBool("align_corners", false);
  g.stepH = numerics::bilinearStep(g.h, g.oh, g.alignCorners,
                                   attrs.getFloat("scales_h", 0.0));
  g.stepW = numerics::bilinearStep(g.w, g.ow, g.alignCorners,
                                   attrs.getFloat("scales_w", 0.0));
  return g;
}

} // namespace ampc::kernels::detail

#endif
