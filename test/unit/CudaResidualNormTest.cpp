//===- CudaResidualNormTest.cpp - The residual add inside the norm kernels ===//
//
// kernel.add_layer_norm and kernel.layer_norm_backward_add (and the RMS
// forms) on the GPU: the fused path (the add inside normRowsWarp /
// normBackwardWarp) against the previous path
// (AMPC_CUDA_FUSED_RESIDUAL_NORM=off: the add, the norm, the cast as
// separate kernels), bitwise, and against the CPU library within the
// norms' tolerance. Skipped without a GPU (bench/gpu.sh runs them).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Kernels.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;
using namespace ampc::cudatest;

namespace {

struct Operand {
  std::vector<float> values;
  DType dtype;
  std::vector<int64_t> shape;
};

// The GPU's output bytes of |name| on |ins|, with
// AMPC_CUDA_FUSED_RESIDUAL_NORM=|path|.
std::vector<std::vector<unsigned char>>
runGpu(const char *name, const char *path, const std::vector<Operand> &ins,
       const std::vector<Operand> &outs, const cpu::Attrs &attrs) {
  ScopedEnv env("AMPC_CUDA_FUSED_RESIDUAL_NORM", path);
  std::vector<std::unique_ptr<DevBuf>> dev;
  std::vector<TensorRef> gin, gout;
  for (const Operand &o : ins) {
    dev.push_back(std::make_unique<DevBuf>(bytesOf(o.values, o.dtype)));
    gin.push_back(cpu::makeRef(dev.back()->p, o.dtype, o.shape));
  }
  std::vector<DevBuf *> devOut;
  for (const Operand &o : outs) {
    // NaN-filled: an element the kernel never writes fails.
    std::vector<unsigned char> nan(bytesOf(o.values, o.dtype).size(), 0xff);
    dev.push_back(std::make_unique<DevBuf>(nan));
    devOut.push_back(dev.back().get());
    gout.push_back(cpu::makeRef(dev.back()->p, o.dtype, o.shape));
  }
  cuda::lookup(name)(gin, gout, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  std::vector<std::vector<unsigned char>> got;
  for (DevBuf *b : devOut)
    got.push_back(b->get());
  return got;
}

std::vector<std::vector<unsigned char>>
runCpu(const char *name, const std::vector<Operand> &ins,
       const std::vector<Operand> &outs, const cpu::Attrs &attrs) {
  std::vector<std::vector<unsigned char>> hin, hout;
  std::vector<TensorRef> cin, cout;
  hin.reserve(ins.size());
  hout.reserve(outs.size());
  for (const Operand &o : ins) {
    hin.push_back(bytesOf(o.values, o.dtype));
    cin.push_back(cpu::makeRef(hin.back().data(), o.dtype, o.shape));
  }
  for (const Operand &o : outs) {
    hout.push_back(bytesOf(o.values, o.dtype));
    cout.push_back(cpu::makeRef(hout.back().data(), o.dtype, o.shape));
  }
  cpu::lookup(name)(cin, cout, attrs);
  return hout;
}

// Fused == previous bitwise; both near the CPU.
void compare(const char *name, const std::vector<Operand> &ins,
             const std::vector<Operand> &outs, float rtol, float atol) {
  cpu::Attrs attrs{{"eps", 1e-5}};
  auto fused = runGpu(name, "on", ins, outs, attrs);
  auto old = runGpu(name, "off", ins, outs, attrs);
  auto cpu = runCpu(name, ins, outs, attrs);
  for (size_t i = 0; i < outs.size(); ++i) {
    ASSERT_EQ(fused[i], old[i]) << name << " output " << i
                                << ": fused and previous paths differ";
    std::vector<float> g = floatsOf(fused[i], outs[i].dtype),
                       c = floatsOf(cpu[i], outs[i].dtype);
    for (size_t k = 0; k < g.size(); ++k)
      ASSERT_NEAR(g[k], c[k], atol + rtol * std::fabs(c[k]))
          << name << " output " << i << " at " << k;
  }
}

struct Case {
  int64_t m, d;
  DType delta, y; // the forward's second addend and result; the backward's g
};

// GPT-2's rows (768, packed: 3 groups of 8 a lane), 2 groups a lane, rows
// that are not a multiple of 8, many rows (several chunks), and d = 1030
// (too wide: the previous kernels anyway).
const Case kCases[] = {
    {64, 768, DType::BF16, DType::BF16}, {37, 768, DType::F32, DType::F32},
    {40, 320, DType::BF16, DType::BF16},
    {9, 13, DType::F16, DType::F16},     {4100, 64, DType::BF16, DType::F32},
    {3, 1030, DType::BF16, DType::BF16},
};

TEST(CudaResidualNorm, AddLayerNormFusedMatchesTheTwoKernels) {
  REQUIRE_GPU();
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.d));
    int64_t m = c.m, d = c.d;
    std::vector<Operand> in = {{randoms(m * d, 2.0f, 1, 0.5f), DType::F32, {m, d}},
                               {randoms(m * d, 1.0f, 2), c.delta, {m, d}},
                               {randoms(d, 1.0f, 3, 1.0f), DType::F32, {d}},
                               {randoms(d, 1.0f, 4), DType::F32, {d}}};
    std::vector<Operand> out = {{std::vector<float>(m * d), DType::F32, {m, d}},
                                {std::vector<float>(m * d), c.y, {m, d}}};
    float rtol = c.y == DType::F32 ? 2e-5f : c.y == DType::F16 ? 2e-3f : 1.6e-2f;
    compare("kernel.add_layer_norm", in, out, rtol, 1e-4f);
  }
}

TEST(CudaResidualNorm, BackwardAddFusedMatchesTheKernels) {
  REQUIRE_GPU();
  for (const Case &c : kCases)
    for (bool half : {true, false}) {
      SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.d) +
                   (half ? " with the half copy" : ""));
      int64_t m = c.m, d = c.d;
      std::vector<Operand> in = {
          {randoms(m * d, 2.0f, 1, 0.5f), DType::F32, {m, d}},
          {randoms(d, 1.0f, 2, 1.0f), DType::F32, {d}},
          {randoms(m * d, 1.0f, 4), c.delta, {m, d}},
          {randoms(m * d, 0.5f, 5), DType::F32, {m, d}}};
      std::vector<Operand> out = {
          {std::vector<float>(m * d), DType::F32, {m, d}},
          {std::vector<float>(d), DType::F32, {d}},
          {std::vector<float>(d), DType::F32, {d}}};
      if (half)
        out.push_back({std::vector<float>(m * d),
                       c.y == DType::F32 ? DType::BF16 : c.y, {m, d}});
      compare("kernel.layer_norm_backward_add", in, out, 1.6e-2f,
              1e-4f * std::sqrt(float(m)));
    }
}

TEST(CudaResidualNorm, RmsFormsFusedMatchTheKernels) {
  REQUIRE_GPU();
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.d));
    int64_t m = c.m, d = c.d;
    std::vector<Operand> in = {{randoms(m * d, 2.0f, 1, 0.5f), DType::F32, {m, d}},
                               {randoms(m * d, 1.0f, 2), c.delta, {m, d}},
                               {randoms(d, 1.0f, 3, 1.0f), DType::F32, {d}}};
    std::vector<Operand> out = {{std::vector<float>(m * d), DType::F32, {m, d}},
                                {std::vector<float>(m * d), c.y, {m, d}}};
    float rtol = c.y == DType::F32 ? 2e-5f : c.y == DType::F16 ? 2e-3f : 1.6e-2f;
    compare("kernel.add_rms_norm", in, out, rtol, 1e-4f);
    std::vector<Operand> bin = {{in[0].values, DType::F32, {m, d}},
                                {in[2].values, DType::F32, {d}},
                                {randoms(m * d, 1.0f, 4), c.delta, {m, d}},
                                {randoms(m * d, 0.5f, 5), DType::F32, {m, d}}};
    std::vector<Operand> bout = {{std::vector<float>(m * d), DType::F32, {m, d}},
                                 {std::vector<float>(d), DType::F32, {d}},
                                 {std::vector<float>(m * d), DType::BF16, {m, d}}};
    compare("kernel.rms_norm_backward_add", bin, bout, 1.6e-2f,
            1e-4f * std::sqrt(float(m)));
  }
}

} // namespace
