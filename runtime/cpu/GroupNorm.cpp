//===- GroupNorm.cpp - group_norm and its backward ------------------------===//
//
// Per (sample, group) statistics accumulate in float (two pass, biased
// variance), as layer_norm's do.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/cpu/NormStats.h"
#include "runtime/kernels/BatchNorm.h"

#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;


// in: x, weight, bias. out: y.
void groupNormKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.group_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef &w = required(op, in, 1), &b = required(op, in, 2);
  GroupNormGeometry g =
      groupNormGeometry(op, x, attrs.getInt("num_groups"), {&w, &b});
  float eps = float(attrs.getFloat("eps", 1e-5));
  FloatIn fx(x), fw(w), fb(b);
  FloatOut fy(y);
  int64_t len = g.groupSize();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      int64_t base = (n * g.groups + grp) * len;
      // Group |grp| of sample |n|: one contiguous run of cpg*S elements.
      MeanVar s = meanVar(fx.data() + base, 1, len, len);
      float rstd = rstdOf(s, eps);
      for (int64_t j = 0; j < len; ++j) {
        int64_t c = grp * g.perGroup + j / g.spatial;
        fy[base + j] = (fx[base + j] - s.mean) * rstd * fw[c] + fb[c];
      }
    }
  fy.commit();
}

// in: x, weight, g. out: dx, dweight [C], dbias [C] (any may be null).
void groupNormBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.group_norm_backward";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &gy = required(op, in, 2);
  const TensorRef *dx = optional(out, 0), *dw = optional(out, 1),
                  *db = optional(out, 2);
  GroupNormGeometry g =
      groupNormGeometry(op, x, attrs.getInt("num_groups"), {&w, dw, db});
  if (gy.numel() != x.numel() || (dx && dx->numel() != x.numel()))
    fail(op, "g and dx must have x's shape");
  float eps = float(attrs.getFloat("eps", 1e-5));
  FloatIn fx(x), fw(w), fg(gy);
  int64_t len = g.groupSize(), channels = g.groups * g.perGroup;
  std::vector<float> gdx(dx ? size_t(x.numel()) : 0),
      gdw(static_cast<size_t>(channels)),
      gdb(static_cast<size_t>(channels));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      int64_t base = (n * g.groups + grp) * len;
      // Group |grp| of sample |n|: one contiguous run of cpg*S elements.
      MeanVar s = meanVar(fx.data() + base, 1, len, len);
      float rstd = rstdOf(s, eps);
      float sgw = 0.0f, sgwx = 0.0f;
      for (int64_t j = 0; j < len; ++j) {
        int64_t c = grp * g.perGroup + j / g.spatial;
        float xhat = (fx[base + j] - s.mean) * rstd;
        float gw = fg[base + j] * fw[c];
        sgw += gw;
        sgwx += gw * xhat;
        gdw[c] += fg[base + j] * xhat;
        gdb[c] += fg[base + j];
      }
      if (!dx)
        continue;
      float mgw = sgw / float(len), mgwx = sgwx / float(len);
      for (int64_t j = 0; j < len; ++j) {
        int64_t c = grp * g.perGroup + j / g.spatial;
        float xhat = (fx[base + j] - s.mean) * rstd;
        gdx[base + j] =
            normInputGrad(rstd, fg[base + j] * fw[c], xhat, mgw, mgwx);
      }
    }
  narrowGrads(gdx, dx, gdw, dw, &gdb, db);
}

} // namespace ampc::cpu
