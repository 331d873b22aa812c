//===- Conv.cpp - conv2d and its backward ops (NCHW, im2col + sgemm) ------===//
#include "runtime/cpu/Common.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

struct ConvGeom : ConvShape {
  int64_t colRows() const { return cg * kh * kw; }
  int64_t colCols() const { return oh * ow; }
};

// The output positions [lo, hi) of one axis whose input index
// o * stride + offset lies in [0, size): the rest read padding.
struct Valid {
  int64_t lo, hi;
};
Valid validRange(int64_t outSize, int64_t size, int64_t stride,
                 int64_t offset) {
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t lo = offset >= 0 ? 0 : ceilDiv(-offset, stride);
  int64_t hi = size - offset <= 0 ? 0 : ceilDiv(size - offset, stride);
  lo = std::min(lo, outSize);
  return {lo, std::clamp(hi, lo, outSize)};
}

// im2col's rows [ys.lo, ys.hi) of one column row when both strides are 1
// and the result is as wide as the input: the plane shifted by |shift|
// elements, one copy for all rows instead of a short one per row, then the
// columns outside xs (which wrapped around a row's end) zeroed.
void shiftedRows(const ConvGeom &g, const float *plane, float *row, Valid ys,
                 Valid xs, int64_t shift) {
  int64_t lo = std::max(ys.lo * g.w, -shift);
  int64_t hi = std::min(ys.hi * g.w, g.h * g.w - shift);
  if (lo < hi)
    std::copy(plane + lo + shift, plane + hi + shift, row + lo);
  // Column by column: usually one, and a call per row would cost more.
  auto zeroColumn = [&](int64_t ox) {
    for (int64_t oy = ys.lo; oy < ys.hi; ++oy)
      row[oy * g.w + ox] = 0.0f;
  };
  for (int64_t ox = 0; ox < xs.lo; ++ox)
    zeroColumn(ox);
  for (int64_t ox = xs.hi; ox < g.w; ++ox)
    zeroColumn(ox);
}

// One image's channel group [Cg, H, W] -> columns [Cg*KH*KW, OH*OW]. Each
// column row copies the interior as whole (strided) runs and zeroes the
// padded borders, instead of testing bounds per element.
void im2col(const ConvGeom &g, const float *x, float *col) {
  for (int64_t c = 0; c < g.cg; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        float *row = col + ((c * g.kh + i) * g.kw + j) * g.colCols();
        int64_t offY = i * g.dh - g.ph, offX = j * g.dw - g.pw;
        Valid ys = validRange(g.oh, g.h, g.sh, offY);
        Valid xs = validRange(g.ow, g.w, g.sw, offX);
        std::fill(row, row + ys.lo * g.ow, 0.0f);
        if (g.sh == 1 && g.sw == 1 && g.ow == g.w)
          shiftedRows(g, x + c * g.h * g.w, row, ys, xs, offY * g.w + offX);
        else
          for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
            float *dst = row + oy * g.ow;
            const float *src = x + (c * g.h + oy * g.sh + offY) * g.w;
            std::fill(dst, dst + xs.lo, 0.0f);
            if (g.sw == 1)
              std::copy(src + xs.lo + offX, src + xs.hi + offX, dst + xs.lo);
            else
              for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
                dst[ox] = src[ox * g.sw + offX];
            std::fill(dst + xs.hi, dst + g.ow, 0.0f);
          }
        std::fill(row + ys.hi * g.ow, row + g.colCols(), 0.0f);
      }
}

// dst[k * stride] += src[k] for k < n. Separate pointers (restrict) so the
// unit-stride case vectorizes; the sums are the same one-by-one float adds.
void addStrided(float *__restrict dst, const float *__restrict src, int64_t n,
                int64_t stride) {
  if (stride == 1)
    for (int64_t k = 0; k < n; ++k)
      dst[k] += src[k];
  else
    for (int64_t k = 0; k < n; ++k)
      dst[k * stride] += src[k];
}

// Adds columns back into one image's channel group (float accumulation).
// Every input element receives its terms in (c, i, j) order as before: for
// fixed (c, i, j) no two output positions meet the same input element, so
// only the interior runs change, not the order of any sum.
void col2im(const ConvGeom &g, const float *col, float *x) {
  for (int64_t c = 0; c < g.cg; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const float *row = col + ((c * g.kh + i) * g.kw + j) * g.colCols();
        int64_t offY = i * g.dh - g.ph, offX = j * g.dw - g.pw;
        Valid ys = validRange(g.oh, g.h, g.sh, offY);
        Valid xs = validRange(g.ow, g.w, g.sw, offX);
        if (xs.lo >= xs.hi)
          continue;
        for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
          float *dst = x + (c * g.h + oy * g.sh + offY) * g.w;
          addStrided(dst + xs.lo * g.sw + offX, row + oy * g.ow + xs.lo,
                     xs.hi - xs.lo, g.sw);
        }
      }
}

} // namespace

void conv2dKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs) {
  constexpr std::string_view op = "graph.conv2d";
  const TensorRef &x = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef *bias = optional(in, 2);
  const TensorRef &y = required(op, out, 0);
  ConvGeom g{convGeometry(op, x, w, y, attrs, bias)};
  FloatIn fx(x), fw(w);
  FloatOut fy(y);
  std::vector<float> col(size_t(g.colRows() * g.colCols()));
  std::optional<FloatIn> fb;
  if (bias)
    fb.emplace(*bias);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2col(g, fx.data() + (n * g.c + gr * g.cg) * g.h * g.w, col.data());
      sgemm(false, false, g.og, g.colCols(), g.colRows(), 1.0f,
            fw.data() + gr * g.og * g.colRows(), g.colRows(), col.data(),
            g.colCols(), 0.0f,
            fy.data() + (n * g.o + gr * g.og) * g.colCols(), g.colCols());
    }
    // The bias right after the image's GEMMs, while its result is in cache.
    if (fb)
      for (int64_t o = 0; o < g.o; ++o) {
        float *p = fy.data() + (n * g.o + o) * g.colCols();
        float b = (*fb)[o];
        for (int64_t i = 0; i < g.colCols(); ++i)
          p[i] += b;
      }
  }
  fy.commit();
}

namespace {

// dx from g [N,O,OH,OW] and weight (conv2d_backward_input), plus an optional
// bias [C] in float before the one rounding (conv_transpose2d).
void backwardInput(std::string_view op, const TensorRef &gy,
                   const TensorRef &w, const TensorRef *bias,
                   const TensorRef &dx, const Attrs &attrs) {
  ConvGeom g{convGeometry(op, dx, w, gy, attrs)};
  if (bias && bias->numel() != g.c)
    fail(op, "bias must be [Cout]");
  FloatIn fg(gy), fw(w);
  FloatOut fdx(dx, /*zeroed=*/true);
  std::vector<float> col(size_t(g.colRows() * g.colCols()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      sgemm(true, false, g.colRows(), g.colCols(), g.og, 1.0f,
            fw.data() + gr * g.og * g.colRows(), g.colRows(),
            fg.data() + (n * g.o + gr * g.og) * g.colCols(), g.colCols(),
            0.0f, col.data(), g.colCols());
      col2im(g, col.data(), fdx.data() + (n * g.c + gr * g.cg) * g.h * g.w);
    }
  if (bias) {
    FloatIn fb(*bias);
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t c = 0; c < g.c; ++c) {
        float *p = fdx.data() + (n * g.c + c) * g.h * g.w;
        for (int64_t i = 0; i < g.h * g.w; ++i)
          p[i] += fb[c];
      }
  }
  fdx.commit();
}

} // namespace

// dx from g [N,O,OH,OW] and weight; the result's shape is the input's.
void conv2dBackwardInputKernel(std::span<const TensorRef> in,
                               std::span<const TensorRef> out,
                               const Attrs &attrs) {
  constexpr std::string_view op = "graph.conv2d_backward_input";
  backwardInput(op, required(op, in, 0), required(op, in, 1), nullptr,
                required(op, out, 0), attrs);
}

// conv_transpose2d(x [N,Cin,H,W], weight [Cin,Cout/g,KH,KW], bias?) is
// conv2d_backward_input with x as the cotangent; output_padding only shows
// in the result's shape.
void convTranspose2dKernel(std::span<const TensorRef> in,
                           std::span<const TensorRef> out,
                           const Attrs &attrs) {
  constexpr std::string_view op = "graph.conv_transpose2d";
  backwardInput(op, required(op, in, 0), required(op, in, 1), optional(in, 2),
                required(op, out, 0), attrs);
}

// dweight from x and g, summed over the batch in float.
void conv2dBackwardWeightKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs) {
  constexpr std::string_view op = "graph.conv2d_backward_weight";
  const TensorRef &x = required(op, in, 0), &gy = required(op, in, 1);
  const TensorRef &dw = required(op, out, 0);
  ConvGeom g{convGeometry(op, x, dw, gy, attrs)};
  FloatIn fx(x), fg(gy);
  FloatOut fdw(dw, /*zeroed=*/true);
  std::vector<float> col(size_t(g.colRows() * g.colCols()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2col(g, fx.data() + (n * g.c + gr * g.cg) * g.h * g.w, col.data());
      sgemm(false, true, g.og, g.colRows(), g.colCols(), 1.0f,
            fg.data() + (n * g.o + gr * g.og) * g.colCols(), g.colCols(),
            col.data(), g.colCols(), 1.0f,
            fdw.data() + gr * g.og * g.colRows(), g.colRows());
    }
  fdw.commit();
}

} // namespace ampc::cpu
