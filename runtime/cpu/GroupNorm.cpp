//===- GroupNorm.cpp - group_norm and its backward ------------------------===//
//
// Per (sample, group) statistics accumulate in float (two pass, biased
// variance), as layer_norm's do.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/kernels/BatchNorm.h"

#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

struct GroupStats {
  float mean, rstd;
};

// Group |grp| of sample |n|: channels [grp*cpg, (grp+1)*cpg), contiguous in
// x (row-major [N, C, S]), so one run of cpg*S elements from |base|.
GroupStats groupStats(const float *x, int64_t len, float eps) {
  float sum = 0.0f;
  for (int64_t j = 0; j < len; ++j)
    sum += x[j];
  float mean = sum / float(len), var = 0.0f;
  for (int64_t j = 0; j < len; ++j)
    var += (x[j] - mean) * (x[j] - mean);
  return {mean, 1.0f / std::sqrt(var / float(len) + eps)};
}

} // namespace

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
      GroupStats s = groupStats(fx.data() + base, len, eps);
      for (int64_t j = 0; j < len; ++j) {
        int64_t c = grp * g.perGroup + j / g.spatial;
        fy[base + j] = (fx[base + j] - s.mean) * s.rstd * fw[c] + fb[c];
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
      GroupStats s = groupStats(fx.data() + base, len, eps);
      float sgw = 0.0f, sgwx = 0.0f;
      for (int64_t j = 0; j < len; ++j) {
        int64_t c = grp * g.perGroup + j / g.spatial;
        float xhat = (fx[base + j] - s.mean) * s.rstd;
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
        float xhat = (fx[base + j] - s.mean) * s.rstd;
        gdx[base + j] = s.rstd * (fg[base + j] * fw[c] - mgw - xhat * mgwx);
      }
    }
  if (dx)
    narrow(gdx.data(), *dx);
  if (dw)
    narrow(gdw.data(), *dw);
  if (db)
    narrow(gdb.data(), *db);
}

} // namespace ampc::cpu
