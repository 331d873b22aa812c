//===- Conv.cpp - conv2d and its backward ops (NCHW, im2col + sgemm) ------===//
#include "runtime/cpu/Common.h"

#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

struct ConvGeom {
  int64_t n, c, h, w;   // input
  int64_t o, kh, kw;    // weight [O, C/groups, KH, KW]
  int64_t oh, ow;       // result
  int64_t sh, sw, ph, pw, dh, dw, groups, cg, og;
  int64_t colRows() const { return cg * kh * kw; }
  int64_t colCols() const { return oh * ow; }
};

std::vector<int64_t> pair(std::string_view op, const Attrs &attrs,
                          std::string_view name, int64_t dflt) {
  std::vector<int64_t> v = attrs.getInts(name, {dflt, dflt});
  if (v.size() != 2)
    fail(op, std::string(name) + " must have two entries");
  return v;
}

// |x| [N,C,H,W], |w| [O,C/g,KH,KW], |y| [N,O,OH,OW]: checks them together.
ConvGeom geometry(std::string_view op, const TensorRef &x, const TensorRef &w,
                  const TensorRef &y, const Attrs &attrs) {
  if (x.rank != 4 || w.rank != 4 || y.rank != 4)
    fail(op, "expected rank-4 NCHW tensors");
  auto s = pair(op, attrs, "stride", 1), p = pair(op, attrs, "padding", 0),
       d = pair(op, attrs, "dilation", 1);
  ConvGeom g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0],
             w.shape[2], w.shape[3], y.shape[2], y.shape[3], s[0], s[1], p[0],
             p[1], d[0], d[1], attrs.getInt("groups", 1), 0, 0};
  if (g.groups < 1 || g.c % g.groups || g.o % g.groups)
    fail(op, "groups must divide the channel counts");
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  if (w.shape[1] != g.cg || y.shape[0] != g.n || y.shape[1] != g.o)
    fail(op, "weight or result channels mismatch");
  int64_t eh = (g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  int64_t ew = (g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  if (eh != g.oh || ew != g.ow)
    fail(op, "result spatial size does not match stride/padding/dilation");
  return g;
}

// One image's channel group [Cg, H, W] -> columns [Cg*KH*KW, OH*OW].
void im2col(const ConvGeom &g, const float *x, float *col) {
  for (int64_t c = 0; c < g.cg; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        float *row = col + ((c * g.kh + i) * g.kw + j) * g.colCols();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t ix = ox * g.sw - g.pw + j * g.dw;
            row[oy * g.ow + ox] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w
                                      ? x[(c * g.h + iy) * g.w + ix]
                                      : 0.0f;
          }
        }
      }
}

// Adds columns back into one image's channel group (float accumulation).
void col2im(const ConvGeom &g, const float *col, float *x) {
  for (int64_t c = 0; c < g.cg; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const float *row = col + ((c * g.kh + i) * g.kw + j) * g.colCols();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h)
            continue;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t ix = ox * g.sw - g.pw + j * g.dw;
            if (ix >= 0 && ix < g.w)
              x[(c * g.h + iy) * g.w + ix] += row[oy * g.ow + ox];
          }
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
  ConvGeom g = geometry(op, x, w, y, attrs);
  if (bias && bias->numel() != g.o)
    fail(op, "bias must be [O]");
  FloatIn fx(x), fw(w);
  FloatOut fy(y);
  std::vector<float> col(size_t(g.colRows() * g.colCols()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2col(g, fx.data() + (n * g.c + gr * g.cg) * g.h * g.w, col.data());
      sgemm(false, false, g.og, g.colCols(), g.colRows(), 1.0f,
            fw.data() + gr * g.og * g.colRows(), g.colRows(), col.data(),
            g.colCols(), 0.0f,
            fy.data() + (n * g.o + gr * g.og) * g.colCols(), g.colCols());
    }
  if (bias) {
    FloatIn fb(*bias);
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t o = 0; o < g.o; ++o) {
        float *p = fy.data() + (n * g.o + o) * g.colCols();
        for (int64_t i = 0; i < g.colCols(); ++i)
          p[i] += fb[o];
      }
  }
  fy.commit();
}

// dx from g [N,O,OH,OW] and weight; the result's shape is the input's.
void conv2dBackwardInputKernel(std::span<const TensorRef> in,
                               std::span<const TensorRef> out,
                               const Attrs &attrs) {
  constexpr std::string_view op = "graph.conv2d_backward_input";
  const TensorRef &gy = required(op, in, 0), &w = required(op, in, 1);
  const TensorRef &dx = required(op, out, 0);
  ConvGeom g = geometry(op, dx, w, gy, attrs);
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
  fdx.commit();
}

// dweight from x and g, summed over the batch in float.
void conv2dBackwardWeightKernel(std::span<const TensorRef> in,
                                std::span<const TensorRef> out,
                                const Attrs &attrs) {
  constexpr std::string_view op = "graph.conv2d_backward_weight";
  const TensorRef &x = required(op, in, 0), &gy = required(op, in, 1);
  const TensorRef &dw = required(op, out, 0);
  ConvGeom g = geometry(op, x, dw, gy, attrs);
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
