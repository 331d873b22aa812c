//===- Norm.cpp - softmax, log_softmax, layer_norm, rms_norm, backward ----===//
//
// Statistics (max, sums, mean, variance) accumulate in float.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"
#include "runtime/cpu/NormStats.h"

#include <cmath>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// An optional [d] affine operand widened to float; empty when absent.
std::vector<float> widenOptional(const TensorRef *t, int64_t d) {
  std::vector<float> v;
  if (t) {
    v.resize(static_cast<size_t>(d));
    widen(*t, v.data());
  }
  return v;
}

template <bool Log>
void softmaxLike(std::string_view op, std::span<const TensorRef> in,
                 std::span<const TensorRef> out, const Attrs &attrs) {
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  auto [outer, n, inner] = softmaxGeometry(op, x, y, attrs);
  FloatIn fx(x);
  FloatOut fy(y);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *px = fx.data() + o * n * inner + i;
      float *py = fy.data() + o * n * inner + i;
      float mx = -INFINITY;
      for (int64_t j = 0; j < n; ++j)
        mx = std::fmax(mx, px[j * inner]);
      float sum = 0.0f;
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(px[j * inner] - mx);
      if constexpr (Log) {
        float lse = std::log(sum);
        for (int64_t j = 0; j < n; ++j)
          py[j * inner] = px[j * inner] - mx - lse;
      } else {
        for (int64_t j = 0; j < n; ++j)
          py[j * inner] = std::exp(px[j * inner] - mx) / sum;
      }
    }
  fy.commit();
}

} // namespace

void softmaxKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs) {
  softmaxLike<false>("graph.softmax", in, out, attrs);
}
void logSoftmaxKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs) {
  softmaxLike<true>("graph.log_softmax", in, out, attrs);
}

// (x - mean) / sqrt(var + eps) * weight + bias over |m| rows of |d| floats,
// biased variance (two pass); |fw|, |fb| empty when absent.
static void layerNormRows(const float *x, float *y, int64_t m, int64_t d,
                          const std::vector<float> &fw,
                          const std::vector<float> &fb, float eps) {
  for (int64_t r = 0; r < m; ++r) {
    const float *px = x + r * d;
    float *py = y + r * d;
    MeanVar s = meanVar(px, 1, d, d);
    float mean = s.mean, rstd = rstdOf(s, eps);
    for (int64_t j = 0; j < d; ++j) {
      float v = (px[j] - mean) * rstd;
      if (!fw.empty())
        v *= fw[j];
      if (!fb.empty())
        v += fb[j];
      py[j] = v;
    }
  }
}

void layerNormKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.layer_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef *w = optional(in, 1), *b = optional(in, 2);
  int64_t d;
  int64_t m = normRows(op, x, y, d, {w, b});
  float eps = float(attrs.getFloat("eps", 1e-5));
  FloatIn fx(x);
  FloatOut fy(y);
  std::vector<float> fw = widenOptional(w, d), fb = widenOptional(b, d);
  layerNormRows(fx.data(), fy.data(), m, d, fw, fb, eps);
  fy.commit();
}

// in: lhs, rhs, weight?, bias?. out: sum (f32), y. sum = lhs + rhs in
// float, then layer_norm of the sum: bitwise the add loop and the
// layer_norm it replaces (kernel-fuse-residual-norm).
void addLayerNormKernel(std::span<const TensorRef> in,
                        std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "kernel.add_layer_norm";
  const TensorRef &a = required(op, in, 0), &bb = required(op, in, 1);
  const TensorRef &sum = required(op, out, 0), &y = required(op, out, 1);
  const TensorRef *w = optional(in, 2), *b = optional(in, 3);
  int64_t d;
  int64_t m = lastDimRows(op, a, d, {w, b});
  if (bb.numel() != a.numel() || sum.numel() != a.numel() ||
      y.numel() != a.numel())
    fail(op, "rhs, sum and result need lhs's size");
  if (sum.dtype != DType::F32)
    fail(op, "the sum must be f32");
  float eps = float(attrs.getFloat("eps", 1e-5));
  FloatIn fa(a), fb2(bb);
  std::vector<float> s(static_cast<size_t>(a.numel()));
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = fa.data()[i] + fb2.data()[i];
  narrow(s.data(), sum);
  FloatOut fy(y);
  std::vector<float> fw = widenOptional(w, d), fb = widenOptional(b, d);
  layerNormRows(s.data(), fy.data(), m, d, fw, fb, eps);
  fy.commit();
}

// x / sqrt(mean(x^2) + eps) * weight over |m| rows of |d| floats; |fw|
// empty when absent.
static void rmsNormRows(const float *x, float *y, int64_t m, int64_t d,
                        const std::vector<float> &fw, float eps) {
  for (int64_t r = 0; r < m; ++r) {
    const float *px = x + r * d;
    float *py = y + r * d;
    float ss = 0.0f;
    for (int64_t j = 0; j < d; ++j)
      ss += px[j] * px[j];
    float rrms = 1.0f / std::sqrt(ss / float(d) + eps);
    for (int64_t j = 0; j < d; ++j)
      py[j] = !fw.empty() ? px[j] * rrms * fw[j] : px[j] * rrms;
  }
}

void rmsNormKernel(std::span<const TensorRef> in,
                   std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.rms_norm";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  const TensorRef *w = optional(in, 1);
  int64_t d;
  int64_t m = normRows(op, x, y, d, {w});
  float eps = float(attrs.getFloat("eps", kernels::machineEpsilon(x.dtype)));
  FloatIn fx(x);
  FloatOut fy(y);
  std::vector<float> fw = widenOptional(w, d);
  rmsNormRows(fx.data(), fy.data(), m, d, fw, eps);
  fy.commit();
}

// in: lhs, rhs, weight?. out: sum (f32), y. As addLayerNormKernel, for
// rms_norm (eps defaults to f32's, the sum's type).
void addRmsNormKernel(std::span<const TensorRef> in,
                      std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "kernel.add_rms_norm";
  const TensorRef &a = required(op, in, 0), &bb = required(op, in, 1);
  const TensorRef &sum = required(op, out, 0), &y = required(op, out, 1);
  const TensorRef *w = optional(in, 2);
  int64_t d;
  int64_t m = lastDimRows(op, a, d, {w});
  if (bb.numel() != a.numel() || sum.numel() != a.numel() ||
      y.numel() != a.numel())
    fail(op, "rhs, sum and result need lhs's size");
  if (sum.dtype != DType::F32)
    fail(op, "the sum must be f32");
  float eps = float(attrs.getFloat("eps", kernels::machineEpsilon(DType::F32)));
  FloatIn fa(a), fb(bb);
  std::vector<float> s(static_cast<size_t>(a.numel()));
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = fa.data()[i] + fb.data()[i];
  narrow(s.data(), sum);
  FloatOut fy(y);
  rmsNormRows(s.data(), fy.data(), m, d, widenOptional(w, d), eps);
  fy.commit();
}

// in: x, weight, g. out: dx, dweight [D], dbias [D] (any may be null).
//   xhat = (x - mean) * rstd, dweight = sum_rows g*xhat, dbias = sum_rows g,
//   dx = rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)).
// With |acc|, dx + acc (in float) is stored instead of dx, to |dx| and to
// |dxHalf| when given.
static void layerNormBackward(std::string_view op, const TensorRef &x,
                              const TensorRef &w, const TensorRef &gy,
                              const TensorRef *dx, const TensorRef *dw,
                              const TensorRef *db, const TensorRef *acc,
                              const TensorRef *dxHalf, const Attrs &attrs) {
  int64_t d;
  int64_t m = normBackwardRows(op, x, w, gy, dx, dw, db, d);
  float eps = float(attrs.getFloat("eps", 1e-5));
  FloatIn fx(x), fw(w), fg(gy);
  std::vector<float> gdx(dx ? size_t(x.numel()) : 0), gdw(static_cast<size_t>(d)),
      gdb(static_cast<size_t>(d)), xhat(static_cast<size_t>(d)), gw(static_cast<size_t>(d));
  for (int64_t r = 0; r < m; ++r) {
    const float *px = fx.data() + r * d, *pg = fg.data() + r * d;
    MeanVar s = meanVar(px, 1, d, d);
    float mean = s.mean, rstd = rstdOf(s, eps);
    float sgw = 0.0f, sgwx = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      xhat[j] = (px[j] - mean) * rstd;
      gw[j] = pg[j] * fw[j];
      sgw += gw[j];
      sgwx += gw[j] * xhat[j];
      gdw[j] += pg[j] * xhat[j];
      gdb[j] += pg[j];
    }
    if (dx) {
      float mgw = sgw / float(d), mgwx = sgwx / float(d);
      for (int64_t j = 0; j < d; ++j)
        gdx[r * d + j] = normInputGrad(rstd, gw[j], xhat[j], mgw, mgwx);
    }
  }
  if (acc && dx) {
    FloatIn fa(*acc);
    for (size_t i = 0; i < gdx.size(); ++i)
      gdx[i] = gdx[i] + fa.data()[i];
  }
  narrowGrads(gdx, dx, gdw, dw, &gdb, db);
  if (dxHalf && dx)
    narrow(gdx.data(), *dxHalf);
}

void layerNormBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out,
                             const Attrs &attrs) {
  constexpr std::string_view op = "graph.layer_norm_backward";
  layerNormBackward(op, required(op, in, 0), required(op, in, 1),
                    required(op, in, 2), optional(out, 0), optional(out, 1),
                    optional(out, 2), nullptr, nullptr, attrs);
}

// in: x, weight, g, acc. out: dx_sum (f32), dweight, dbias, dx_half?.
// layer_norm_backward with acc added to dx in float: bitwise the backward
// and the add (+ cast) loop it replaces (kernel-fuse-residual-norm).
void layerNormBackwardAddKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs) {
  constexpr std::string_view op = "kernel.layer_norm_backward_add";
  const TensorRef &x = required(op, in, 0), &acc = required(op, in, 3);
  const TensorRef &dx = required(op, out, 0);
  const TensorRef *half = optional(out, 3);
  if (acc.numel() != x.numel() || (half && half->numel() != x.numel()))
    fail(op, "acc and dx_half need x's size");
  if (dx.dtype != DType::F32)
    fail(op, "dx_sum must be f32");
  layerNormBackward(op, x, required(op, in, 1), required(op, in, 2), &dx,
                    optional(out, 1), optional(out, 2), &acc, half, attrs);
}

// in: x, weight, g. out: dx, dweight [D].
//   xhat = x * rrms, dweight = sum_rows g*xhat,
//   dx = rrms * (g*w - xhat * mean(g*w*xhat)).
// With |acc|, dx + acc (in float) is stored instead of dx, to |dx| and to
// |dxHalf| when given.
static void rmsNormBackward(std::string_view op, const TensorRef &x,
                            const TensorRef &w, const TensorRef &gy,
                            const TensorRef *dx, const TensorRef *dw,
                            const TensorRef *acc, const TensorRef *dxHalf,
                            const Attrs &attrs) {
  int64_t d;
  int64_t m = normBackwardRows(op, x, w, gy, dx, dw, nullptr, d);
  float eps = float(attrs.getFloat("eps", kernels::machineEpsilon(x.dtype)));
  FloatIn fx(x), fw(w), fg(gy);
  std::vector<float> gdx(dx ? size_t(x.numel()) : 0), gdw(static_cast<size_t>(d)),
      xhat(static_cast<size_t>(d)), gw(static_cast<size_t>(d));
  for (int64_t r = 0; r < m; ++r) {
    const float *px = fx.data() + r * d, *pg = fg.data() + r * d;
    float ss = 0.0f;
    for (int64_t j = 0; j < d; ++j)
      ss += px[j] * px[j];
    float rrms = 1.0f / std::sqrt(ss / float(d) + eps);
    float sgwx = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      xhat[j] = px[j] * rrms;
      gw[j] = pg[j] * fw[j];
      sgwx += gw[j] * xhat[j];
      gdw[j] += pg[j] * xhat[j];
    }
    if (dx) {
      float mgwx = sgwx / float(d);
      for (int64_t j = 0; j < d; ++j)
        gdx[r * d + j] = rrms * (gw[j] - xhat[j] * mgwx);
    }
  }
  if (acc && dx) {
    FloatIn fa(*acc);
    for (size_t i = 0; i < gdx.size(); ++i)
      gdx[i] = gdx[i] + fa.data()[i];
  }
  narrowGrads(gdx, dx, gdw, dw);
  if (dxHalf && dx)
    narrow(gdx.data(), *dxHalf);
}

void rmsNormBackwardKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.rms_norm_backward";
  rmsNormBackward(op, required(op, in, 0), required(op, in, 1),
                  required(op, in, 2), optional(out, 0), optional(out, 1),
                  nullptr, nullptr, attrs);
}

// in: x, weight, g, acc. out: dx_sum (f32), dweight, dx_half?. As
// layerNormBackwardAddKernel, for rms_norm_backward.
void rmsNormBackwardAddKernel(std::span<const TensorRef> in,
                              std::span<const TensorRef> out,
                              const Attrs &attrs) {
  constexpr std::string_view op = "kernel.rms_norm_backward_add";
  const TensorRef &x = required(op, in, 0), &acc = required(op, in, 3);
  const TensorRef &dx = required(op, out, 0);
  const TensorRef *half = optional(out, 2);
  if (acc.numel() != x.numel() || (half && half->numel() != x.numel()))
    fail(op, "acc and dx_half need x's size");
  if (dx.dtype != DType::F32)
    fail(op, "dx_sum must be f32");
  rmsNormBackward(op, x, required(op, in, 1), required(op, in, 2), &dx,
                  optional(out, 1), &acc, half, attrs);
}

} // namespace ampc::cpu
