//===- CudaCrossEntropyGradTest.cpp - The loss and its gradient in one pass ===//
//
// graph.cross_entropy_with_grad on the GPU: the one pass (ceRowsGrad)
// against the separate kernels (AMPC_CUDA_CROSS_ENTROPY=separate: cross_
// entropy's, then cross_entropy_backward's), bitwise, with dlogits in a
// buffer of its own and over the logits; and against the CPU library within
// the exps' tolerance. Skipped without a GPU (bench/gpu.sh runs them).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Kernels.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;
using namespace ampc::cudatest;

namespace {

struct Case {
  int64_t rows, classes;
  DType logits;
  int64_t ignore;
  double smoothing;
  int64_t padded = 0; // trailing classes at -inf, as graph-pad-classes makes
};

// GPT-2's vocabulary (50257: rows not 16-byte aligned, element loads), as
// graph-pad-classes pads it (50264 with 7 classes at -inf: 16-byte packs),
// a small row, f32 (packed with smoothing at 64 classes) and f16 logits,
// ignored labels and smoothing.
const Case kCases[] = {
    {8, 50257, DType::BF16, -100, 0.0},
    {8, 50264, DType::BF16, -100, 0.0, 7},
    {33, 37, DType::F32, 3, 0.1},
    {12, 64, DType::F32, 5, 0.1},
    {16, 1000, DType::F16, 0, 0.0},
};

std::vector<unsigned char> labelBytes(const Case &c) {
  std::vector<int64_t> y(size_t(c.rows));
  for (int64_t r = 0; r < c.rows; ++r)
    y[size_t(r)] = r % 5 == 2 ? c.ignore : (r * 7919 + 3) % c.classes;
  std::vector<unsigned char> b(y.size() * 8);
  std::memcpy(b.data(), y.data(), b.size());
  return b;
}

struct Result {
  std::vector<unsigned char> loss, dlogits;
};

// The GPU's loss and dlogits with AMPC_CUDA_CROSS_ENTROPY=|path|; dlogits
// written over the logits when |inPlace|.
Result runGpu(const Case &c, const char *path, bool inPlace,
              const std::vector<unsigned char> &z,
              const std::vector<unsigned char> &y, const cpu::Attrs &attrs) {
  ScopedEnv env("AMPC_CUDA_CROSS_ENTROPY", path);
  std::vector<int64_t> zs = {c.rows, c.classes}, ys = {c.rows};
  DevBuf dz(z), dy(y), dg(bytesOf({65536.0f}, DType::F32));
  // NaN-filled: an element the kernel never writes fails.
  DevBuf dl(std::vector<unsigned char>(4, 0xff));
  DevBuf dd(std::vector<unsigned char>(z.size(), 0xff));
  std::vector<TensorRef> in = {cpu::makeRef(dz.p, c.logits, zs),
                    cpu::makeRef(dy.p, DType::I64, ys),
                    cpu::makeRef(dg.p, DType::F32, {})};
  std::vector<TensorRef> out = {cpu::makeRef(dl.p, DType::F32, {}),
                     cpu::makeRef(inPlace ? dz.p : dd.p, c.logits, zs)};
  cuda::lookup("graph.cross_entropy_with_grad")(in, out, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  return {dl.get(), inPlace ? dz.get() : dd.get()};
}

TEST(CudaCrossEntropyGrad, OnePassMatchesTheSeparateKernels) {
  REQUIRE_GPU();
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.classes));
    cpu::Attrs attrs{{"ignore_index", c.ignore},
                     {"label_smoothing", c.smoothing}};
    std::vector<float> zf = randoms(size_t(c.rows * c.classes), 3.0f, 7);
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t j = c.classes - c.padded; j < c.classes; ++j)
        zf[size_t(r * c.classes + j)] = -INFINITY;
    std::vector<unsigned char> z = bytesOf(zf, c.logits);
    std::vector<unsigned char> y = labelBytes(c);
    Result one = runGpu(c, "one-pass", false, z, y, attrs);
    Result sep = runGpu(c, "separate", false, z, y, attrs);
    Result over = runGpu(c, "one-pass", true, z, y, attrs);
    Result overSep = runGpu(c, "separate", true, z, y, attrs);
    Result elements;
    {
      ScopedEnv rows("AMPC_CUDA_CE_ROWS", "elements");
      elements = runGpu(c, "one-pass", false, z, y, attrs);
    }
    EXPECT_EQ(one.loss, sep.loss);
    EXPECT_EQ(one.dlogits, sep.dlogits);
    EXPECT_EQ(over.loss, one.loss);
    EXPECT_EQ(over.dlogits, one.dlogits) << "in place";
    EXPECT_EQ(overSep.dlogits, one.dlogits) << "separate, in place";
    // Element loads: another order of the row's FP32 sums, the same values
    // to rounding (bitwise where the rows take element loads anyway).
    float le = floatsOf(elements.loss, DType::F32)[0],
          lo = floatsOf(one.loss, DType::F32)[0];
    EXPECT_NEAR(le, lo, 1e-6f * std::fabs(lo)) << "element loads";

    // The CPU library: the same formula with its own exp.
    std::vector<unsigned char> hl(4), hd(z.size()), hz = z, hy = y;
    std::vector<unsigned char> hg = bytesOf({65536.0f}, DType::F32);
    std::vector<int64_t> zs = {c.rows, c.classes}, ys = {c.rows};
    std::vector<TensorRef> in = {cpu::makeRef(hz.data(), c.logits, zs),
                      cpu::makeRef(hy.data(), DType::I64, ys),
                      cpu::makeRef(hg.data(), DType::F32, {})};
    std::vector<TensorRef> out = {cpu::makeRef(hl.data(), DType::F32, {}),
                       cpu::makeRef(hd.data(), c.logits, zs)};
    cpu::lookup("graph.cross_entropy_with_grad")(in, out, attrs);
    float gl = floatsOf(one.loss, DType::F32)[0],
          cl = floatsOf(hl, DType::F32)[0];
    EXPECT_NEAR(gl, cl, 1e-5f * std::fabs(cl));
    std::vector<float> g = floatsOf(one.dlogits, c.logits),
                       h = floatsOf(hd, c.logits);
    float rtol = c.logits == DType::BF16 ? 1.6e-2f
                 : c.logits == DType::F16 ? 2e-3f
                                          : 1e-5f;
    for (size_t k = 0; k < g.size(); ++k)
      ASSERT_NEAR(g[k], h[k], 1e-3f + rtol * std::fabs(h[k])) << "at " << k;
    // A padded class (-inf) gets exactly 0.
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t j = c.classes - c.padded; j < c.classes; ++j)
        ASSERT_EQ(g[size_t(r * c.classes + j)], 0.0f) << "row " << r;
  }
}

} // namespace
