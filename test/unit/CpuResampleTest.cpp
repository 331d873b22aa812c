//===- CpuResampleTest.cpp - adaptive pooling, nearest/bilinear upsampling ===//
//
// The CPU kernels against PyTorch's own float32 numbers
// (test/unit/torch/resample_expected.py writes ResampleExpected.inc from the
// same inputs): uneven overlapping adaptive windows, global pooling, nearest
// upsampling by 2 and 3, by a size, by a float scale pair (whose index map
// differs from the size's), and downsampling. Copies and dyadic sums are
// exact; averages too (the kernel divides by the height, then the width,
// as aten).
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

namespace ampc::cpu::test {
namespace {

#include "test/unit/torch/ResampleExpected.inc"

std::vector<double> ramp(int64_t n, int mul, int mod, int off, double div) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(double((i * mul) % mod - off) / div);
  return v;
}

int64_t numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

// The float a %.9g value of the script denotes.
std::vector<double> asFloats(std::vector<double> v) {
  for (double &d : v)
    d = double(float(d));
  return v;
}

// Runs |op| and its backward on the script's x and g; checks both against
// PyTorch within |rel| (0: exactly).
void check(const char *op, const char *backward, std::vector<int64_t> xs,
           std::vector<int64_t> ys, const Attrs &attrs,
           const std::vector<double> &wantY, const std::vector<double> &wantDx,
           double rel) {
  SCOPED_TRACE(op);
  Tensor x = fromValues(DType::F32, xs, ramp(numel(xs), 37, 23, 11, 8.0));
  Tensor g = fromValues(DType::F32, ys, ramp(numel(ys), 13, 17, 8, 4.0));
  Tensor y(DType::F32, ys), dx(DType::F32, xs);
  run(op, {&x}, {&y}, attrs);
  expectClose(y, asFloats(wantY), 0.0, rel, "forward");
  run(backward, {&g}, {&dx}, attrs);
  expectClose(dx, asFloats(wantDx), 0.0, rel, "backward");
}

constexpr const char *kAdaptive = "graph.adaptive_avg_pool2d";
constexpr const char *kAdaptiveBack = "graph.adaptive_avg_pool2d_backward";
constexpr const char *kNearest = "graph.upsample_nearest2d";
constexpr const char *kNearestBack = "graph.upsample_nearest2d_backward";

TEST(CpuResample, AdaptiveAvgPoolMatchesPyTorch) {
  check(kAdaptive, kAdaptiveBack, {1, 2, 5, 7}, {1, 2, 3, 4}, {}, adaptiveY,
        adaptiveDx, 0);
  check(kAdaptive, kAdaptiveBack, {2, 3, 3, 3}, {2, 3, 1, 1}, {}, globalY,
        globalDx, 0);
}

TEST(CpuResample, UpsampleNearestMatchesPyTorch) {
  Attrs two{{"scales_h", 2.0}, {"scales_w", 2.0}};
  check(kNearest, kNearestBack, {1, 2, 2, 3}, {1, 2, 4, 6}, two, scale2Y,
        scale2Dx, 0);
  Attrs three{{"scales_h", 3.0}, {"scales_w", 3.0}};
  check(kNearest, kNearestBack, {1, 1, 2, 2}, {1, 1, 6, 6}, three, scale3Y,
        scale3Dx, 0);
  check(kNearest, kNearestBack, {1, 2, 3, 4}, {1, 2, 5, 7}, {}, sizeY, sizeDx,
        0);
  check(kNearest, kNearestBack, {1, 1, 4, 3}, {1, 1, 5, 4},
        {{"scales_h", 1.4}, {"scales_w", 1.6}}, floatY, floatDx, 0);
  check(kNearest, kNearestBack, {1, 1, 4, 3}, {1, 1, 5, 4}, {}, floatSizeY,
        floatSizeDx, 0);
  check(kNearest, kNearestBack, {1, 1, 5, 6}, {1, 1, 2, 4}, {}, downY, downDx,
        0);
}

// Bilinear (F.interpolate mode="bilinear"), worked out by hand in exact
// fractions from aten's index and weight formulas: every value is dyadic, so
// the float kernels must give them exactly. A: 2x2 -> 4x4 by scale 2
// (PyTorch's documented example: 1, 1.25, 1.75, 2, ...); B: align_corners
// 2x2 -> 3x3; C: 4x4 -> 2x2 (each output the mean of a 2x2 block; no
// antialiasing); D: an unchanged size copies.
constexpr const char *kBilinear = "graph.upsample_bilinear2d";
constexpr const char *kBilinearBack = "graph.upsample_bilinear2d_backward";

void checkBilinear(std::vector<int64_t> xs, std::vector<int64_t> ys,
                   const Attrs &attrs, std::vector<double> x,
                   std::vector<double> wantY, std::vector<double> g,
                   std::vector<double> wantDx) {
  Tensor tx = fromValues(DType::F32, xs, x), tg = fromValues(DType::F32, ys, g);
  Tensor y(DType::F32, ys), dx(DType::F32, xs);
  run(kBilinear, {&tx}, {&y}, attrs);
  expectEqual(y, wantY, "forward");
  run(kBilinearBack, {&tg}, {&dx}, attrs);
  expectEqual(dx, wantDx, "backward");
}

std::vector<double> iota(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[size_t(i)] = i;
  return v;
}

TEST(CpuResample, UpsampleBilinearByHand) {
  checkBilinear({1, 1, 2, 2}, {1, 1, 4, 4},
                {{"scales_h", 2.0}, {"scales_w", 2.0}}, {1, 2, 3, 4},
                {1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25,
                 3.5, 3.0, 3.25, 3.75, 4.0},
                iota(16), {12.5, 19.5, 40.5, 47.5});
  checkBilinear({1, 1, 2, 2}, {1, 1, 3, 3}, {{"align_corners", true}},
                {1, 2, 3, 4}, {1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0},
                iota(9), {3.0, 6.0, 12.0, 15.0});
  checkBilinear({1, 1, 4, 4}, {1, 1, 2, 2}, {}, iota(16),
                {2.5, 4.5, 10.5, 12.5}, {1, 2, 3, 4},
                {0.25, 0.25, 0.5, 0.5, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1.0,
                 1.0, 0.75, 0.75, 1.0, 1.0});
  checkBilinear({1, 2, 2, 3}, {1, 2, 2, 3}, {}, iota(12), iota(12), iota(12),
                iota(12));
}

// Non-dyadic steps (scales 1.4 / 1.6, align_corners 4 -> 7): the kernels
// against a float transcription of aten's upsample_bilinear2d written here
// apart from runtime/numerics (area_pixel_compute_scale /
// compute_source_index_and_lambda, then UpSampleKernel.cpp's
// t0 * w0 + t1 * w1 per dimension, and the backward's (h * w) * g in output
// order), bit for bit.
struct AtenTap {
  int64_t i0, i1;
  float l0, l1;
};
AtenTap atenTap(int64_t dst, int64_t in, int64_t out, bool corners,
                double scale) {
  if (in == out)
    return {dst, dst, 1.0f, 0.0f};
  float ratio = corners ? (out > 1 ? float(in - 1) / float(out - 1) : 0.0f)
                        : (scale > 0 ? float(1.0 / scale) : float(in) / out);
  float real = corners ? ratio * float(dst)
                       : ratio * (float(dst) + 0.5f) - 0.5f;
  if (!corners && real < 0.0f)
    real = 0.0f;
  int64_t i0 = std::min<int64_t>(int64_t(std::floor(real)), in - 1);
  float l1 = std::min(std::max(real - float(i0), 0.0f), 1.0f);
  return {i0, i0 + (i0 < in - 1 ? 1 : 0), 1.0f - l1, l1};
}

TEST(CpuResample, UpsampleBilinearMatchesAtenTranscription) {
  struct Case {
    int64_t h, w, oh, ow;
    bool corners;
    double sh, sw;
  };
  for (const Case &k : {Case{4, 3, 5, 4, false, 1.4, 1.6},
                        Case{4, 5, 7, 3, true, 0, 0},
                        Case{7, 9, 3, 4, false, 0, 0}}) {
    SCOPED_TRACE(std::to_string(k.h) + "x" + std::to_string(k.w) + " -> " +
                 std::to_string(k.oh) + "x" + std::to_string(k.ow));
    Attrs attrs;
    if (k.corners)
      attrs.set("align_corners", true);
    if (k.sh > 0) {
      attrs.set("scales_h", k.sh);
      attrs.set("scales_w", k.sw);
    }
    std::vector<double> x = asFloats(ramp(k.h * k.w, 37, 23, 11, 7.0));
    std::vector<double> g = asFloats(ramp(k.oh * k.ow, 13, 17, 8, 3.0));
    std::vector<double> wantY, wantDx(size_t(k.h * k.w), 0.0);
    std::vector<float> dx(size_t(k.h * k.w), 0.0f);
    for (int64_t a = 0; a < k.oh; ++a) {
      AtenTap r = atenTap(a, k.h, k.oh, k.corners, k.sh);
      for (int64_t b = 0; b < k.ow; ++b) {
        AtenTap c = atenTap(b, k.w, k.ow, k.corners, k.sw);
        auto at = [&](int64_t i, int64_t j) { return float(x[size_t(i * k.w + j)]); };
        float t0 = at(r.i0, c.i0) * c.l0 + at(r.i0, c.i1) * c.l1;
        float t1 = at(r.i1, c.i0) * c.l0 + at(r.i1, c.i1) * c.l1;
        wantY.push_back(t0 * r.l0 + t1 * r.l1);
        float v = float(g[size_t(a * k.ow + b)]);
        dx[size_t(r.i0 * k.w + c.i0)] += r.l0 * c.l0 * v;
        dx[size_t(r.i0 * k.w + c.i1)] += r.l0 * c.l1 * v;
        dx[size_t(r.i1 * k.w + c.i0)] += r.l1 * c.l0 * v;
        dx[size_t(r.i1 * k.w + c.i1)] += r.l1 * c.l1 * v;
      }
    }
    for (size_t i = 0; i < dx.size(); ++i)
      wantDx[i] = dx[i];
    checkBilinear({1, 1, k.h, k.w}, {1, 1, k.oh, k.ow}, attrs, x, wantY, g,
                  wantDx);
  }
}

// Half types: the float result rounded once (copies are exact).
TEST(CpuResample, HalfTypesRoundOnce) {
  for (DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(name(t));
    Tensor x = fromValues(t, {1, 1, 3, 1}, {1.0, 2.0, 4.0});
    Tensor y(t, {1, 1, 1, 1});
    run(kAdaptive, {&x}, {&y});
    EXPECT_EQ(y.get(0), roundFromFloat(t, 7.0f / 3.0f / 1.0f));
    Tensor up(t, {1, 1, 6, 2});
    run(kNearest, {&x}, {&up}, Attrs{{"scales_h", 2.0}, {"scales_w", 2.0}});
    EXPECT_EQ(up.get(11), 4.0);
  }
}

TEST(CpuResample, RejectsMismatchedShapes) {
  Tensor x(DType::F32, {1, 2, 4, 4}), y(DType::F32, {1, 3, 2, 2});
  EXPECT_THROW(run(kAdaptive, {&x}, {&y}), std::invalid_argument);
  Tensor flat(DType::F32, {2, 4, 4});
  EXPECT_THROW(run(kNearest, {&flat}, {&y}), std::invalid_argument);
}

} // namespace
} // namespace ampc::cpu::test
