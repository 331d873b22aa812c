//===- CudaKernelsTest.cpp - runtime/cuda against the CPU kernel library ---===//
//
// The registry test runs everywhere; the rest needs a CUDA device and skips
// without one. Each device result is compared with runtime/cpu (the
// reference numerics) on the same inputs.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Epilogue.h"
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Epilogue.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/numerics/Scaler.h"
#include "test/unit/CudaTestUtil.h"
#include "test/unit/Inputs/conv_transpose_fixture.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

using namespace ampc;
using cpu::TensorRef;
using rt::DType;
using namespace ampc::cudatest;

namespace {

// A device copy of a host float vector, freed at scope end.
using Dev = DeviceCopy<float>;

void expectNear(const std::vector<float> &a, const std::vector<float> &b,
                float rtol, float atol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], atol + rtol * std::fabs(b[i])) << "at " << i;
}

// Both libraries share one ABI and one op list (runtime/kernels).
static_assert(std::is_same_v<cuda::TensorRef, cpu::TensorRef> &&
              std::is_same_v<cuda::Attrs, cpu::Attrs>);

TEST(CudaRegistry, EveryListedOpHasAKernel) {
  auto ops = cuda::registeredOps();
  ASSERT_EQ(ops.data(), cpu::registeredOps().data());
  ASSERT_GT(ops.size(), 40u);
  for (std::string_view n : ops)
    EXPECT_NE(cuda::lookup(n), nullptr) << n;
  EXPECT_EQ(cuda::lookup("linear"), cuda::lookup("graph.linear"));
  EXPECT_EQ(cuda::lookup("graph.nope"), nullptr);
}

// Runs op |name| on the CPU and the GPU (FP32 tensors) and compares every
// output.
void compareOutputs(const char *name, std::vector<std::vector<float>> ins,
                    std::vector<std::vector<int64_t>> inShapes,
                    std::vector<std::vector<int64_t>> outShapes,
                    const cpu::Attrs &attrs, float rtol, float atol) {
  std::vector<TensorRef> cin, gin, cout, gout;
  std::vector<std::unique_ptr<Dev>> keep, devOuts;
  std::vector<std::vector<float>> hostOuts;
  for (size_t i = 0; i < ins.size(); ++i) {
    cin.push_back(cpu::makeRef(ins[i].data(), DType::F32, inShapes[i]));
    keep.push_back(std::make_unique<Dev>(ins[i]));
    gin.push_back(cpu::makeRef(keep.back()->p, DType::F32, inShapes[i]));
  }
  hostOuts.reserve(outShapes.size());
  for (const auto &shape : outShapes) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    hostOuts.emplace_back(n);
    // NaN-filled device outputs: an element the kernel never writes fails.
    devOuts.push_back(std::make_unique<Dev>(std::vector<float>(n, NAN)));
    cout.push_back(cpu::makeRef(hostOuts.back().data(), DType::F32, shape));
    gout.push_back(cpu::makeRef(devOuts.back()->p, DType::F32, shape));
  }
  cpu::lookup(name)(cin, cout, attrs);
  cuda::lookup(name)(gin, gout, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  for (size_t i = 0; i < outShapes.size(); ++i) {
    SCOPED_TRACE(std::string(name) + " output " + std::to_string(i));
    expectNear(devOuts[i]->get(), hostOuts[i], rtol, atol);
  }
}

void compareOp(const char *name, std::vector<std::vector<float>> ins,
               std::vector<std::vector<int64_t>> inShapes,
               std::vector<int64_t> outShape, const cpu::Attrs &attrs,
               float rtol = 1e-5f, float atol = 1e-5f) {
  compareOutputs(name, std::move(ins), std::move(inShapes), {outShape}, attrs,
                 rtol, atol);
}

TEST(CudaKernels, LinearWithBias) {
  REQUIRE_GPU();
  compareOp("graph.linear", {randoms(6 * 5), randoms(4 * 5, 1, 2), randoms(4, 1, 3)},
            {{6, 5}, {4, 5}, {4}}, {6, 4}, {}, 1e-4f, 1e-4f);
}

TEST(CudaKernels, BatchMatmul) {
  REQUIRE_GPU();
  compareOp("graph.batch_matmul", {randoms(2 * 3 * 4), randoms(2 * 4 * 5, 1, 2)},
            {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5}, {}, 1e-4f, 1e-4f);
}

TEST(CudaKernels, SoftmaxAndLayerNorm) {
  REQUIRE_GPU();
  compareOp("graph.softmax", {randoms(3 * 7)}, {{3, 7}}, {3, 7},
            {{"axis", int64_t(-1)}});
  compareOp("graph.layer_norm", {randoms(4 * 9), randoms(9, 1, 2), randoms(9, 1, 3)},
            {{4, 9}, {9}, {9}}, {4, 9}, {{"eps", 1e-5}}, 1e-4f, 1e-5f);
}

TEST(CudaKernels, ReduceSumOverAxes) {
  REQUIRE_GPU();
  compareOp("graph.reduce_sum", {randoms(2 * 3 * 4)}, {{2, 3, 4}}, {4},
            {{"axes", {0, 1}}, {"keepdim", false}}, 1e-5f, 1e-5f);
}

// Column sums (bias gradients): leading axes reduced, several row chunks;
// a non-leading axis takes the general path.
TEST(CudaKernels, ReduceOverLeadingAxesInChunks) {
  REQUIRE_GPU();
  compareOp("graph.reduce_sum", {randoms(64 * 50 * 33)}, {{64, 50, 33}}, {33},
            {{"axes", {0, 1}}, {"keepdim", false}}, 1e-4f, 1e-4f);
  compareOp("graph.reduce_mean", {randoms(700 * 3)}, {{700, 3}}, {1, 3},
            {{"axes", {0}}, {"keepdim", true}}, 1e-4f, 1e-5f);
  compareOp("graph.reduce_sum", {randoms(5000)}, {{5000}}, {},
            {{"axes", {0}}, {"keepdim", false}}, 1e-4f, 1e-4f);
  compareOp("graph.reduce_sum", {randoms(6 * 40 * 7)}, {{6, 40, 7}}, {6, 7},
            {{"axes", {1}}, {"keepdim", false}}, 1e-5f, 1e-5f);
  // Rows of 70000, as GPT-2's position-table gradient (8 x 786432): 20
  // rows are one chunk of columnPartials, 3 and 8 take columnDirect.
  compareOp("graph.reduce_sum", {randoms(20 * 70000)}, {{20, 70000}}, {70000},
            {{"axes", {0}}, {"keepdim", false}}, 1e-5f, 1e-5f);
  compareOp("graph.reduce_sum", {randoms(8 * 70000)}, {{8, 70000}}, {70000},
            {{"axes", {0}}, {"keepdim", false}}, 1e-5f, 1e-5f);
  compareOp("graph.reduce_mean", {randoms(3 * 70000)}, {{3, 70000}}, {1, 70000},
            {{"axes", {0}}, {"keepdim", true}}, 1e-5f, 1e-5f);
}

// dx, dweight, dbias; rows in many chunks (600) and a wide row (1000).
// Issue 13's activations and pointwise ops and their backward ops: the same
// formulas (runtime/numerics/Elementwise.h) on both sides; nvcc may contract
// and uses its own libm, so a few float ulps apart.
TEST(CudaKernels, ActivationsAndPointwiseMath) {
  REQUIRE_GPU();
  const std::vector<float> x = randoms(5 * 7, 2.0f), g = randoms(5 * 7, 1.0f, 2);
  const std::vector<int64_t> s = {5, 7};
  for (const char *op : {"graph.silu", "graph.abs", "graph.erf", "graph.sin",
                         "graph.cos", "graph.reciprocal"})
    compareOp(op, {x}, {s}, s, {}, 1e-5f, 1e-6f);
  compareOp("graph.leaky_relu", {x}, {s}, s, {{"negative_slope", 0.2}});
  compareOp("graph.elu", {x}, {s}, s,
            {{"alpha", 1.6732632423543772}, {"scale", 1.0507009873554805}});
  compareOp("graph.elu_backward", {x, g}, {s, s}, s,
            {{"alpha", 0.5}, {"input_scale", 2.0}});
  compareOp("graph.softplus", {x}, {s}, s, {{"beta", 2.0}, {"threshold", 1.5}});
  compareOp("graph.clamp", {x}, {s}, s, {{"min", -0.5}});
  compareOp("graph.clamp", {x}, {s}, s, {{"min", -0.5}, {"max", 0.7}});
  compareOp("graph.maximum", {x, randoms(7, 1.0f, 3)}, {s, {7}}, s, {});
  compareOp("graph.minimum", {randoms(5, 1.0f, 3), x}, {{5, 1}, s}, s, {});
  compareOp("graph.silu_backward", {x, g}, {s, s}, s, {});
  compareOp("graph.leaky_relu_backward", {x, g}, {s, s}, s,
            {{"negative_slope", 0.2}});
  compareOp("graph.softplus_backward", {x, g}, {s, s}, s,
            {{"beta", 2.0}, {"threshold", 1.5}});
  compareOp("graph.clamp_backward", {x, g}, {s, s}, s, {{"max", 0.3}});
  // Ties: every other element of b equals a.
  std::vector<float> b = randoms(5 * 7, 1.0f, 4);
  for (size_t i = 0; i < b.size(); i += 2)
    b[i] = x[i];
  compareOp("graph.maximum_backward", {x, b, g}, {s, s, s}, s, {}, 0.0f, 0.0f);
}

TEST(CudaKernels, RegressionLosses) {
  REQUIRE_GPU();
  const std::vector<float> x = randoms(700 * 3, 2.0f), t = randoms(700 * 3, 1.0f, 2);
  const std::vector<int64_t> s = {700, 3};
  for (const char *red : {"mean", "sum"}) {
    compareOp("graph.l1_loss", {x, t}, {s, s}, {}, {{"reduction", std::string(red)}},
              1e-4f, 1e-5f);
    compareOp("graph.smooth_l1_loss", {x, t}, {s, s}, {},
              {{"reduction", std::string(red)}, {"beta", 0.5}}, 1e-4f, 1e-5f);
    compareOp("graph.huber_loss", {x, t}, {s, s}, {},
              {{"reduction", std::string(red)}, {"delta", 1.5}}, 1e-4f, 1e-5f);
  }
  compareOp("graph.huber_loss", {x, t}, {s, s}, s,
            {{"reduction", std::string("none")}, {"delta", 1.5}});
  compareOp("graph.smooth_l1_loss", {x, t}, {s, s}, s,
            {{"reduction", std::string("none")}, {"beta", 0.0}});
}

// where / masked_fill with an i64 condition (compareOp passes f32 tensors
// only), against values selected on the host: exact.
TEST(CudaKernels, WhereAndMaskedFill) {
  REQUIRE_GPU();
  std::vector<int64_t> cond = {0, 1, 1, 0, 1};
  std::vector<float> x = randoms(5 * 7), y = randoms(7, 1.0f, 2);
  Dev dx(x), dy(y);
  DeviceCopy<int64_t> d64(cond);
  std::vector<float> want(5 * 7), wantFill(5 * 7);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) {
      want[i * 7 + j] = cond[i] ? x[i * 7 + j] : y[j];
      wantFill[i * 7 + j] = cond[i] ? -2.5f : x[i * 7 + j];
    }
  Dev out(std::vector<float>(5 * 7, NAN));
  std::vector<TensorRef> in = {cpu::makeRef(d64.p, DType::I64, {5, 1}),
                     cpu::makeRef(dx.p, DType::F32, {5, 7}),
                     cpu::makeRef(dy.p, DType::F32, {7})};
  std::vector<TensorRef> o = {cpu::makeRef(out.p, DType::F32, {5, 7})};
  cuda::lookup("graph.where")(in, o, {}, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  expectNear(out.get(), want, 0.0f, 0.0f);
  std::vector<TensorRef> fin = {in[1], in[0]};
  cuda::lookup("graph.masked_fill")(fin, o, {{"value", -2.5}}, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  expectNear(out.get(), wantFill, 0.0f, 0.0f);
}

// Grouped-query attention (4 query heads on 2 kv heads) with an additive
// float mask and causal masking; the forward and the three gradients.
TEST(CudaKernels, AttentionGroupedQueryAdditiveMask) {
  REQUIRE_GPU();
  std::vector<float> mask = randoms(5 * 6, 1.0f, 9);
  mask[2 * 6 + 0] = mask[2 * 6 + 1] = mask[2 * 6 + 2] = -INFINITY; // row 2: all
  cpu::Attrs a{{"causal", true}, {"scale", 0.4}};
  compareOp("graph.scaled_dot_product_attention",
            {randoms(2 * 4 * 5 * 3), randoms(2 * 2 * 6 * 3, 1, 2),
             randoms(2 * 2 * 6 * 4, 1, 3), mask},
            {{2, 4, 5, 3}, {2, 2, 6, 3}, {2, 2, 6, 4}, {5, 6}}, {2, 4, 5, 4}, a,
            1e-4f, 1e-4f);
  compareOutputs("graph.scaled_dot_product_attention_backward",
                 {randoms(2 * 4 * 5 * 3), randoms(2 * 2 * 6 * 3, 1, 2),
                  randoms(2 * 2 * 6 * 4, 1, 3), randoms(2 * 4 * 5 * 4, 1, 4),
                  mask},
                 {{2, 4, 5, 3}, {2, 2, 6, 3}, {2, 2, 6, 4}, {2, 4, 5, 4}, {5, 6}},
                 {{2, 4, 5, 3}, {2, 2, 6, 3}, {2, 2, 6, 4}}, a, 1e-4f, 1e-4f);
}

// An integer keep-mask broadcast over the batch and the query rows.
TEST(CudaKernels, AttentionKeepMask) {
  REQUIRE_GPU();
  std::vector<int32_t> keep = {1, 0, 1, 1, 0, 0, 0, 0}; // [1, 2, 1, 4]: head 1 none
  std::vector<float> q = randoms(2 * 2 * 3 * 4), k = randoms(2 * 1 * 4 * 4, 1, 2),
                     v = randoms(2 * 1 * 4 * 2, 1, 3);
  Dev dq(q), dk(k), dv(v), out(std::vector<float>(2 * 2 * 3 * 2, NAN));
  DeviceCopy<int32_t> dm(keep);
  std::vector<float> want(2 * 2 * 3 * 2);
  std::vector<TensorRef> cin = {cpu::makeRef(q.data(), DType::F32, {2, 2, 3, 4}),
                                cpu::makeRef(k.data(), DType::F32, {2, 1, 4, 4}),
                                cpu::makeRef(v.data(), DType::F32, {2, 1, 4, 2}),
                                cpu::makeRef(keep.data(), DType::I32, {1, 2, 1, 4})};
  std::vector<TensorRef> cout = {cpu::makeRef(want.data(), DType::F32, {2, 2, 3, 2})};
  cpu::lookup("graph.scaled_dot_product_attention")(cin, cout, {});
  std::vector<TensorRef> gin = {cpu::makeRef(dq.p, DType::F32, {2, 2, 3, 4}),
                                cpu::makeRef(dk.p, DType::F32, {2, 1, 4, 4}),
                                cpu::makeRef(dv.p, DType::F32, {2, 1, 4, 2}),
                                cpu::makeRef(dm.p, DType::I32, {1, 2, 1, 4})};
  std::vector<TensorRef> gout = {cpu::makeRef(out.p, DType::F32, {2, 2, 3, 2})};
  cuda::lookup("graph.scaled_dot_product_attention")(gin, gout, {}, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  std::vector<float> got = out.get();
  expectNear(got, want, 1e-5f, 1e-5f);
  EXPECT_EQ(got[3 * 2], 0.0f); // batch 0, head 1: every key masked
}

TEST(CudaKernels, NormBackwardGradients) {
  REQUIRE_GPU();
  for (auto [m, d] : {std::pair<int64_t, int64_t>{600, 96}, {5, 1000}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " d " + std::to_string(d));
    compareOutputs("graph.layer_norm_backward",
                   {randoms(m * d), randoms(d, 1, 2), randoms(m * d, 1, 3)},
                   {{m, d}, {d}, {m, d}}, {{m, d}, {d}, {d}}, {{"eps", 1e-5}},
                   1e-4f, 1e-4f);
    compareOutputs("graph.rms_norm_backward",
                   {randoms(m * d), randoms(d, 1, 2), randoms(m * d, 1, 3)},
                   {{m, d}, {d}, {m, d}}, {{m, d}, {d}}, {{"eps", 1e-6}},
                   1e-4f, 1e-4f);
  }
}

// Repeated ids: the sorted backward sums each row in position order, as the
// CPU does, so the gradients are bitwise equal; rows no id names are zero.
TEST(CudaKernels, EmbeddingBackwardIsTheCpuSum) {
  REQUIRE_GPU();
  const int64_t n = 300, v = 20, d = 40;
  std::vector<int64_t> ids(n);
  std::mt19937 rng(5);
  for (int64_t &id : ids)
    id = int64_t(rng() % 17);
  // One frequent id (over 100 rows, as a common token in text): embeddingRuns
  // loads its rows 8 at a time and adds them in position order.
  for (int64_t i = 0; i < n; i += 3)
    ids[size_t(i)] = 4;
  std::vector<float> g = randoms(n * d, 1.0f, 6), host(v * d);
  DeviceCopy<int64_t> dIds(ids);
  Dev dg(g), dt(std::vector<float>(v * d, NAN));
  TensorRef cin[] = {cpu::makeRef(ids.data(), DType::I64, {n}),
                     cpu::makeRef(g.data(), DType::F32, {n, d})};
  TensorRef gin[] = {cpu::makeRef(dIds.p, DType::I64, {n}),
                     cpu::makeRef(dg.p, DType::F32, {n, d})};
  TensorRef cout = cpu::makeRef(host.data(), DType::F32, {v, d});
  TensorRef gout = cpu::makeRef(dt.p, DType::F32, {v, d});
  cpu::lookup("graph.embedding_backward")(std::span<const TensorRef>(cin),
                                          std::span<const TensorRef>(&cout, 1), {});
  cuda::lookup("graph.embedding_backward")(std::span<const TensorRef>(gin),
                                           std::span<const TensorRef>(&gout, 1), {},
                                           nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  std::vector<float> dev = dt.get();
  for (int64_t i = 0; i < v * d; ++i)
    ASSERT_EQ(dev[i], host[i]) << "at " << i;
  EXPECT_EQ(dev[19 * d], 0.0f);

  // With init (a tied table's other gradient, bf16): the CPU's bits again,
  // the rows no id names (17..19) included, where -0.0 becomes +0.0.
  std::vector<float> initF = randoms(v * d, 1.0f, 7);
  initF[18 * d] = -0.0f;
  std::vector<uint16_t> init(size_t(v * d));
  for (size_t i = 0; i < init.size(); ++i)
    init[i] = num::bf16::fromFloat(initF[i]);
  DeviceCopy<uint16_t> dInit(init);
  TensorRef cin3[] = {cin[0], cin[1], cpu::makeRef(init.data(), DType::BF16, {v, d})};
  TensorRef gin3[] = {gin[0], gin[1], cpu::makeRef(dInit.p, DType::BF16, {v, d})};
  dt.put(std::vector<float>(v * d, NAN));
  cpu::lookup("graph.embedding_backward")(std::span<const TensorRef>(cin3),
                                          std::span<const TensorRef>(&cout, 1), {});
  cuda::lookup("graph.embedding_backward")(std::span<const TensorRef>(gin3),
                                           std::span<const TensorRef>(&gout, 1), {},
                                           nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  dev = dt.get();
  for (int64_t i = 0; i < v * d; ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(dev[i]), std::bit_cast<uint32_t>(host[i]))
        << "init, at " << i;
  EXPECT_FALSE(std::signbit(dev[18 * d]));
}

TEST(CudaKernels, TransposeAndBroadcastAdd) {
  REQUIRE_GPU();
  compareOp("graph.transpose", {randoms(2 * 3 * 4)}, {{2, 3, 4}}, {4, 2, 3},
            {{"perm", {2, 0, 1}}}, 0, 0);
  compareOp("graph.add", {randoms(3 * 4), randoms(4, 1, 2)}, {{3, 4}, {4}},
            {3, 4}, {}, 0, 0);
}

// conv2d and both backward ops against runtime/cpu, through cuda::lookup:
// cuDNN when the build has it (AMPC_CUDA_CONV=im2col runs the same checks
// on the im2col path). Stride 2, padding 1, groups 1 and 2; then a
// rectangular case (every stride/padding/dilation pair unequal, H != W,
// KH != KW) that catches swapped descriptor dimensions. Each geometry runs
// twice (bias and none: the second call takes the cached plan).
TEST(CudaKernels, Conv2dForwardAndBackward) {
  REQUIRE_GPU();
  struct Case {
    int64_t n, c, h, w, o, kh, kw, groups;
    std::vector<int64_t> stride, padding, dilation;
  };
  const Case cases[] = {
      {2, 4, 9, 9, 6, 3, 3, 1, {2, 2}, {1, 1}, {1, 1}},
      {2, 4, 9, 9, 6, 3, 3, 2, {2, 2}, {1, 1}, {1, 1}},
      {3, 4, 10, 8, 6, 3, 2, 2, {2, 1}, {1, 0}, {1, 2}},
  };
  for (const Case &k : cases) {
    int64_t oh = (k.h + 2 * k.padding[0] - k.dilation[0] * (k.kh - 1) - 1) /
                     k.stride[0] + 1;
    int64_t ow = (k.w + 2 * k.padding[1] - k.dilation[1] * (k.kw - 1) - 1) /
                     k.stride[1] + 1;
    std::vector<int64_t> xs{k.n, k.c, k.h, k.w},
        ws{k.o, k.c / k.groups, k.kh, k.kw}, ys{k.n, k.o, oh, ow};
    auto numel = [](const std::vector<int64_t> &s) {
      int64_t n = 1;
      for (int64_t d : s)
        n *= d;
      return size_t(n);
    };
    SCOPED_TRACE("groups " + std::to_string(k.groups) + " x " +
                 std::to_string(k.h) + "x" + std::to_string(k.w) + " kernel " +
                 std::to_string(k.kh) + "x" + std::to_string(k.kw));
    cpu::Attrs attrs{{"stride", k.stride},
                     {"padding", k.padding},
                     {"dilation", k.dilation},
                     {"groups", k.groups}};
    auto x = randoms(numel(xs), 1, 4), w = randoms(numel(ws), 1, 5),
         b = randoms(size_t(k.o), 1, 6), gy = randoms(numel(ys), 1, 7);
    compareOp("graph.conv2d", {x, w, b}, {xs, ws, {k.o}}, ys, attrs, 1e-4f,
              1e-4f);
    compareOp("graph.conv2d", {x, w}, {xs, ws}, ys, attrs, 1e-4f, 1e-4f);
    for (int rep = 0; rep < 2; ++rep) {
      compareOp("graph.conv2d_backward_input", {gy, w}, {ys, ws}, xs, attrs,
                1e-4f, 1e-4f);
      compareOp("graph.conv2d_backward_weight", {x, gy}, {xs, ys}, ws, attrs,
                1e-4f, 1e-4f);
    }
  }
}

// FP32 tensors of |sizes| for an epilogue, on the host (w, g, m, v) and
// the device (dw, dg, dm, dv): random weights and gradients of about
// |gradScale| (seeds from |seed|), zero moments.
struct EpilogueFixture {
  std::vector<std::vector<float>> w, g, m, v;
  std::vector<std::unique_ptr<Dev>> dw, dg, dm, dv;
  std::vector<cuda::EpilogueTensor> ts;
  EpilogueFixture(const std::vector<int64_t> &sizes, float gradScale,
                  int seed) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      w.push_back(randoms(sizes[k], 1, seed + k));
      g.push_back(randoms(sizes[k], gradScale, seed + 10 + k));
      m.push_back(std::vector<float>(sizes[k], 0.0f));
      v.push_back(std::vector<float>(sizes[k], 0.0f));
      dw.push_back(std::make_unique<Dev>(w[k]));
      dg.push_back(std::make_unique<Dev>(g[k]));
      dm.push_back(std::make_unique<Dev>(m[k]));
      dv.push_back(std::make_unique<Dev>(v[k]));
      ts.push_back({dg[k]->p, dw[k]->p, dm[k]->p, dv[k]->p, nullptr, sizes[k]});
    }
  }
};

// The device epilogue against runtime/cpu/Epilogue (AdamW, clip by norm),
// then an overflow: skipped, scale backed off, weights unchanged.
TEST(CudaEpilogue, AdamWMatchesTheCpuAndSkipsOnOverflow) {
  REQUIRE_GPU();
  std::vector<int64_t> sizes = {1000, 70000, 3};
  rt::Hyper h;
  h.lr = 1e-2f;
  h.weightDecay = 0.1f;
  h.clipNorm = 0.5f;
  float scale = 1024.0f;
  EpilogueFixture f(sizes, scale * 0.01f, 10);
  auto &w = f.w, &g = f.g, &m = f.m, &v = f.v;
  auto &dw = f.dw, &dg = f.dg, &dm = f.dm;
  auto &ts = f.ts;
  cuda::EpilogueConfig cfg;
  cfg.clipNorm = true;
  cuda::Epilogue epi(ts, cfg);
  cuda::DeviceState s0;
  s0.scaler.scale = scale;
  DeviceCopy<cuda::DeviceState> stateCopy({s0});
  cuda::DeviceState *state = stateCopy.p;
  cuda::setStepInputs(state, h, 1.0f, nullptr);
  epi.run(state, nullptr);
  cuda::DeviceState s1 = stateCopy.get()[0];

  // The CPU reference.
  std::vector<cpu::GradBuffer> bufs;
  for (auto &x : g)
    bufs.push_back({x.data(), int64_t(x.size())});
  auto r = cpu::unscaleCheckAndNorm(bufs, num::invScale(scale));
  float coef = cpu::clipGradNorm(bufs, r.norm, h.clipNorm);
  cpu::AdamOptions opt;
  opt.lr = h.lr, opt.weightDecay = h.weightDecay, opt.decoupled = true;
  for (size_t k = 0; k < sizes.size(); ++k)
    cpu::adamStep(w[k].data(), g[k].data(), m[k].data(), v[k].data(),
                  sizes[k], opt, 1);
  EXPECT_FALSE(r.foundInf);
  EXPECT_EQ(s1.stats.skipped, 0);
  EXPECT_EQ(s1.step, 1);
  EXPECT_NEAR(s1.stats.gradNorm, r.norm, 1e-5f * r.norm);
  EXPECT_NEAR(s1.stats.clipCoef, coef, 1e-5f * coef);
  EXPECT_EQ(s1.stats.scaleUsed, scale);
  for (size_t k = 0; k < sizes.size(); ++k) {
    expectNear(dw[k]->get(), w[k], 1e-5f, 1e-6f);
    expectNear(dm[k]->get(), m[k], 1e-4f, 1e-7f);
  }

  // An inf gradient: skip, back off (GradScaler), nothing else changes.
  float inf = INFINITY;
  cuda::check(cudaMemcpy(dg[1]->p + 5, &inf, 4, cudaMemcpyHostToDevice), "inf");
  auto before = dw[1]->get();
  cuda::setStepInputs(state, h, 1.0f, nullptr);
  epi.run(state, nullptr);
  cuda::DeviceState s2 = stateCopy.get()[0];
  rt::ScalerState expect = s1.scaler;
  num::updateScaler(expect, true, rt::lossScaleParams(h));
  EXPECT_EQ(s2.stats.skipped, 1);
  EXPECT_EQ(s2.step, 1);
  EXPECT_EQ(s2.scaler.scale, expect.scale);
  EXPECT_EQ(s2.scaler.skippedSteps, 1);
  EXPECT_EQ(dw[1]->get(), before);
}

// Unclipped, the device update is the CPU's bit for bit: both evaluate
// runtime/numerics/Optimizer.h one rounded operation at a time (Rounded.h;
// nvcc used to contract the packed and the element loops' copies into
// different FMAs). Two steps of AdamW with weight decay, then of SGD with
// Nesterov momentum and weight decay; tensors of 1000, 70000 and 3 take
// the packed loop and the element tails.
TEST(CudaEpilogue, UnclippedUpdatesAreTheCpuBitwise) {
  REQUIRE_GPU();
  std::vector<int64_t> sizes = {1000, 70000, 3};
  float scale = 1024.0f;
  auto bits = [](const std::vector<float> &x) {
    std::vector<uint32_t> b;
    for (float f : x)
      b.push_back(std::bit_cast<uint32_t>(f));
    return b;
  };
  for (bool sgd : {false, true}) {
    SCOPED_TRACE(sgd ? "sgd" : "adamw");
    rt::Hyper h;
    h.lr = 1e-2f;
    h.weightDecay = 0.1f;
    h.momentum = sgd ? 0.9f : 0.0f;
    EpilogueFixture f(sizes, scale * 0.01f, 30);
    auto &w = f.w, &g = f.g, &m = f.m, &v = f.v;
    auto &dw = f.dw, &dm = f.dm, &dv = f.dv;
    cuda::EpilogueConfig cfg;
    cfg.nesterov = sgd;
    if (sgd)
      cfg.optimizer = cuda::EpilogueConfig::Optimizer::Sgd;
    cuda::Epilogue epi(f.ts, cfg);
    cuda::DeviceState s0;
    s0.scaler.scale = scale;
    DeviceCopy<cuda::DeviceState> stateCopy({s0});
    for (int step = 1; step <= 2; ++step) {
      float used = stateCopy.get()[0].scaler.scale;
      cuda::setStepInputs(stateCopy.p, h, 1.0f, nullptr);
      epi.run(stateCopy.p, nullptr);
      // The CPU: the same gradients unscaled, then the update.
      std::vector<std::vector<float>> gs = g;
      std::vector<cpu::GradBuffer> bufs;
      for (auto &x : gs)
        bufs.push_back({x.data(), int64_t(x.size())});
      cpu::unscaleCheckAndNorm(bufs, num::invScale(used));
      for (size_t k = 0; k < sizes.size(); ++k) {
        if (sgd) {
          cpu::SgdOptions opt;
          opt.lr = h.lr, opt.momentum = h.momentum, opt.nesterov = true;
          opt.weightDecay = h.weightDecay;
          cpu::sgdStep(w[k].data(), gs[k].data(), m[k].data(), sizes[k], opt,
                       step == 1);
        } else {
          cpu::AdamOptions opt; // the device's scalars: Hyper's floats
          opt.lr = h.lr, opt.weightDecay = h.weightDecay, opt.decoupled = true;
          opt.beta1 = h.beta1, opt.beta2 = h.beta2, opt.eps = h.eps;
          cpu::adamStep(w[k].data(), gs[k].data(), m[k].data(), v[k].data(),
                        sizes[k], opt, step);
        }
        EXPECT_EQ(bits(dw[k]->get()), bits(w[k])) << "step " << step;
        EXPECT_EQ(bits(dm[k]->get()), bits(m[k])) << "step " << step;
        if (!sgd)
          EXPECT_EQ(bits(dv[k]->get()), bits(v[k])) << "step " << step;
      }
    }
  }
}

// The twin of CpuEpilogue.HaltedRefusesEveryStep: the device halts on its
// own (scale floor) and refuses every later step, clean gradients included,
// with no host read in between; the stats stay the halting step's.
TEST(CudaEpilogue, HaltsAtTheScaleFloorAndRefusesLaterSteps) {
  REQUIRE_GPU();
  std::vector<int64_t> sizes = {1000, 140000}; // several chunks
  rt::Hyper h;
  h.scaleFloor = 0.5f;
  h.maxConsecutiveSkips = 0;
  std::vector<std::unique_ptr<Dev>> dw, dg, dm, dv;
  std::vector<cuda::EpilogueTensor> ts;
  for (size_t k = 0; k < sizes.size(); ++k) {
    dw.push_back(std::make_unique<Dev>(randoms(sizes[k], 1, 30 + k)));
    dg.push_back(std::make_unique<Dev>(randoms(sizes[k], 0.01f, 40 + k)));
    dm.push_back(std::make_unique<Dev>(std::vector<float>(sizes[k], 0.0f)));
    dv.push_back(std::make_unique<Dev>(std::vector<float>(sizes[k], 0.0f)));
    ts.push_back({dg[k]->p, dw[k]->p, dm[k]->p, dv[k]->p, nullptr, sizes[k]});
  }
  cuda::Epilogue epi(ts, cuda::EpilogueConfig{}); // AdamW, dynamic
  cuda::DeviceState s0;
  s0.scaler.scale = 1.0f;
  DeviceCopy<cuda::DeviceState> stateCopy({s0});
  cuda::DeviceState *state = stateCopy.p;
  auto step = [&] {
    cuda::setStepInputs(state, h, 1.0f, nullptr);
    epi.run(state, nullptr);
  };
  step(); // clean: trains
  auto w0 = dw[1]->get(), m0 = dm[1]->get(), v0 = dv[1]->get();
  float nan = NAN, one = 1.0f;
  cuda::check(cudaMemcpy(dg[1]->p + 77777, &nan, 4, cudaMemcpyHostToDevice), "nan");
  step(); // 1 -> 0.5
  step(); // 0.25 < 0.5: halts
  cuda::check(cudaMemcpy(dg[1]->p + 77777, &one, 4, cudaMemcpyHostToDevice), "one");
  step(); // refused
  step(); // refused
  cuda::DeviceState s1 = stateCopy.get()[0];
  EXPECT_EQ(s1.scaler.halted, num::kHaltScaleFloor);
  EXPECT_EQ(s1.scaler.scale, 0.5f);
  EXPECT_EQ(s1.scaler.haltScale, 0.25f);
  EXPECT_EQ(s1.scaler.consecutiveSkips, 2);
  EXPECT_EQ(s1.scaler.skippedSteps, 2);
  EXPECT_EQ(s1.scaler.refusedSteps, 2);
  EXPECT_EQ(s1.step, 1);
  EXPECT_EQ(s1.stats.halted, num::kHaltScaleFloor);
  EXPECT_EQ(s1.stats.skipped, 1);
  EXPECT_EQ(s1.stats.scaleUsed, 0.5f);
  EXPECT_EQ(s1.blocksDone, 0u);
  EXPECT_EQ(dw[1]->get(), w0);
  EXPECT_EQ(dm[1]->get(), m0);
  EXPECT_EQ(dv[1]->get(), v0);
}

// Overflow attribution on the device: per-tensor flags in the step report
// (the stats and one byte per tensor, what DeviceModel copies to the host
// in one copy), equal to the CPU epilogue's flags on the same gradients,
// cleared by a clean step; per-tensor counts of non-finite steps.
TEST(CudaEpilogue, PerTensorNonFiniteFlagsAndCounts) {
  REQUIRE_GPU();
  std::vector<int64_t> sizes = {1000, 140000, 3}; // tensor 1: three chunks
  rt::Hyper h;
  std::vector<std::vector<float>> g;
  std::vector<std::unique_ptr<Dev>> dw, dg, dm, dv;
  std::vector<cuda::EpilogueTensor> ts;
  for (size_t k = 0; k < sizes.size(); ++k) {
    g.push_back(randoms(sizes[k], 1, 50 + k));
    dw.push_back(std::make_unique<Dev>(randoms(sizes[k], 1, 60 + k)));
    dg.push_back(std::make_unique<Dev>(g[k]));
    dm.push_back(std::make_unique<Dev>(std::vector<float>(sizes[k], 0.0f)));
    dv.push_back(std::make_unique<Dev>(std::vector<float>(sizes[k], 0.0f)));
    ts.push_back({dg[k]->p, dw[k]->p, dm[k]->p, dv[k]->p, nullptr, sizes[k]});
  }
  cuda::Epilogue epi(ts, cuda::EpilogueConfig{}); // AdamW, dynamic
  cuda::DeviceState s0;
  s0.scaler.scale = 1024.0f;
  DeviceCopy<cuda::DeviceState> stateCopy({s0});
  cuda::DeviceState *state = stateCopy.p;
  std::vector<unsigned char> report(epi.reportBytes());
  ASSERT_EQ(epi.reportBytes(), cuda::Epilogue::kReportFlags + 3);
  // One step on gradients |grads|: the device's report against the CPU.
  auto step = [&](const std::vector<std::vector<float>> &grads) {
    for (size_t k = 0; k < sizes.size(); ++k)
      cuda::check(cudaMemcpy(dg[k]->p, grads[k].data(), sizes[k] * 4,
                             cudaMemcpyHostToDevice),
                  "grad");
    cuda::setStepInputs(state, h, 1.0f, nullptr);
    epi.run(state, nullptr);
    cuda::check(cudaMemcpy(report.data(), epi.report(), report.size(),
                           cudaMemcpyDeviceToHost),
                "report");
    cuda::DeviceState s = stateCopy.get()[0];
    rt::StepStats st = cuda::reportStats(report.data());
    EXPECT_EQ(st.skipped, s.stats.skipped);
    EXPECT_EQ(st.scaleUsed, s.stats.scaleUsed);
    std::vector<std::vector<float>> copy = grads;
    std::vector<cpu::GradBuffer> bufs;
    for (auto &x : copy)
      bufs.push_back({x.data(), int64_t(x.size())});
    std::vector<uint8_t> want(sizes.size());
    cpu::unscaleCheckAndNorm(bufs, 1.0f, want);
    EXPECT_EQ(cuda::reportFlags(report.data(), 3), want);
    return cuda::reportFlags(report.data(), 3);
  };
  using Flags = std::vector<uint8_t>;
  using Counts = std::vector<int64_t>;
  auto bad = g;
  bad[1][140000 - 1] = INFINITY; // the last element of the last chunk
  EXPECT_EQ(step(bad), (Flags{0, 1, 0}));
  bad = g;
  bad[0][0] = NAN;
  bad[2][2] = -INFINITY;
  EXPECT_EQ(step(bad), (Flags{1, 0, 1}));
  EXPECT_EQ(step(g), (Flags{0, 0, 0}));
  EXPECT_EQ(epi.nonFiniteCounts(nullptr), (Counts{1, 1, 1}));
  cuda::DeviceState s1 = stateCopy.get()[0];
  EXPECT_EQ(s1.scaler.skippedSteps, 2);
  EXPECT_EQ(s1.step, 1);
  epi.clearAttribution();
  EXPECT_EQ(epi.nonFiniteCounts(nullptr), (Counts{0, 0, 0}));
}

// batch_norm: the training form (y and the in-place running update) and the
// evaluation form against the CPU library, [N, C] and [N, C, H, W]; the
// backward through compareOutputs.
TEST(CudaKernels, BatchNormTrainEvalAndBackward) {
  REQUIRE_GPU();
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{64, 5}, std::vector<int64_t>{8, 3, 7, 9}}) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    int64_t c = shape[1];
    std::vector<float> x = randoms(n, 2.0f, 4), w = randoms(c, 1, 5),
                       b = randoms(c, 1, 6), rm = randoms(c, 1, 7),
                       rv(c, 1.5f);
    for (bool training : {true, false}) {
      SCOPED_TRACE(std::string(training ? "training " : "eval ") +
                   std::to_string(shape.size()) + "-D");
      std::vector<float> cy(n), crm = rm, crv = rv;
      Dev gx(x), gw(w), gb(b), grm(rm), grv(rv), gy(std::vector<float>(n, NAN));
      std::vector<int64_t> cs = {c};
      const TensorRef cin[] = {cpu::makeRef(x.data(), DType::F32, shape),
                         cpu::makeRef(crm.data(), DType::F32, cs),
                         cpu::makeRef(crv.data(), DType::F32, cs),
                         cpu::makeRef(w.data(), DType::F32, cs),
                         cpu::makeRef(b.data(), DType::F32, cs)};
      const TensorRef gin[] = {cpu::makeRef(gx.p, DType::F32, shape),
                         cpu::makeRef(grm.p, DType::F32, cs),
                         cpu::makeRef(grv.p, DType::F32, cs),
                         cpu::makeRef(gw.p, DType::F32, cs),
                         cpu::makeRef(gb.p, DType::F32, cs)};
      const TensorRef cout[] = {cpu::makeRef(cy.data(), DType::F32, shape)};
      const TensorRef gout[] = {cpu::makeRef(gy.p, DType::F32, shape)};
      cpu::Attrs attrs{{"momentum", 0.1}, {"training", training}};
      using Refs = std::span<const TensorRef>;
      cpu::lookup("graph.batch_norm")(Refs(cin, 5), Refs(cout, 1), attrs);
      cuda::lookup("graph.batch_norm")(Refs(gin, 5), Refs(gout, 1), attrs,
                                       nullptr);
      cuda::check(cudaDeviceSynchronize(), "sync");
      expectNear(gy.get(), cy, 1e-4f, 1e-5f);
      expectNear(grm.get(), crm, 1e-5f, 1e-6f);
      expectNear(grv.get(), crv, 1e-5f, 1e-6f);
      if (!training)
        EXPECT_EQ(grv.get(), rv) << "evaluation changed running_var";
    }
    compareOutputs("graph.batch_norm_backward",
                   {x, w, randoms(n, 1, 8)}, {shape, {c}, shape},
                   {shape, {c}, {c}}, {{"eps", 1e-5}}, 1e-4f, 1e-4f);
  }
}

TEST(CudaKernels, GroupNormForwardAndBackward) {
  REQUIRE_GPU();
  std::vector<int64_t> shape = {4, 6, 5, 7}, cs = {6};
  int64_t n = 4 * 6 * 5 * 7;
  cpu::Attrs attrs{{"num_groups", int64_t(3)}, {"eps", 1e-5}};
  compareOp("graph.group_norm", {randoms(n, 2.0f, 9), randoms(6, 1, 10), randoms(6, 1, 11)},
            {shape, cs, cs}, shape, attrs, 1e-4f, 1e-5f);
  compareOutputs("graph.group_norm_backward",
                 {randoms(n, 2.0f, 9), randoms(6, 1, 10), randoms(n, 1, 12)},
                 {shape, cs, shape}, {shape, cs, cs}, attrs, 1e-4f, 1e-4f);
}

// nll_loss / binary_cross_entropy_with_logits / soft-label cross_entropy /
// argmax / gather / cumsum (runtime/cuda/LossIndex.cu) against the CPU
// library, with integer labels and indices.
struct HostT {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  static HostT f32(std::vector<int64_t> shape, const std::vector<float> &v) {
    HostT t{DType::F32, std::move(shape), {}};
    t.bytes.resize(v.size() * 4);
    std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
  }
  static HostT i64(std::vector<int64_t> shape, const std::vector<int64_t> &v) {
    HostT t{DType::I64, std::move(shape), {}};
    t.bytes.resize(v.size() * 8);
    std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
  }
  static HostT zeros(DType dt, std::vector<int64_t> shape) {
    HostT t{dt, std::move(shape), {}};
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    t.bytes.assign(size_t(n) * cpu::dtypeSize(dt), 0xff); // NaN / -1 filled
    return t;
  }
};

// Runs |name| on both libraries; outputs compared as doubles within
// atol + rtol |cpu| (0, 0: bitwise for integers and copies).
void compareMixed(const char *name, const std::vector<HostT> &ins,
                  std::vector<HostT> outs, const cpu::Attrs &attrs,
                  float rtol, float atol) {
  std::vector<TensorRef> cin, gin, cout, gout;
  std::vector<std::unique_ptr<DevBuf>> dev;
  for (const HostT &t : ins) {
    dev.push_back(std::make_unique<DevBuf>(t.bytes));
    cin.push_back(cpu::makeRef(const_cast<unsigned char *>(t.bytes.data()),
                               t.dtype, t.shape));
    gin.push_back(cpu::makeRef(dev.back()->p, t.dtype, t.shape));
  }
  std::vector<HostT> devOuts = outs;
  for (size_t i = 0; i < outs.size(); ++i) {
    dev.push_back(std::make_unique<DevBuf>(outs[i].bytes));
    cout.push_back(cpu::makeRef(outs[i].bytes.data(), outs[i].dtype,
                                outs[i].shape));
    gout.push_back(cpu::makeRef(dev.back()->p, outs[i].dtype, outs[i].shape));
  }
  cpu::lookup(name)(cin, cout, attrs);
  cuda::lookup(name)(gin, gout, attrs, nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  for (size_t i = 0; i < outs.size(); ++i) {
    SCOPED_TRACE(std::string(name) + " output " + std::to_string(i));
    cuda::check(cudaMemcpy(devOuts[i].bytes.data(), gout[i].data,
                           devOuts[i].bytes.size(), cudaMemcpyDeviceToHost),
                "d2h");
    size_t n = outs[i].bytes.size() / cpu::dtypeSize(outs[i].dtype);
    for (size_t k = 0; k < n; ++k) {
      double a, b;
      if (outs[i].dtype == DType::I64) {
        a = double(reinterpret_cast<const int64_t *>(devOuts[i].bytes.data())[k]);
        b = double(reinterpret_cast<const int64_t *>(outs[i].bytes.data())[k]);
      } else {
        a = reinterpret_cast<const float *>(devOuts[i].bytes.data())[k];
        b = reinterpret_cast<const float *>(outs[i].bytes.data())[k];
      }
      if (std::isnan(b)) {
        ASSERT_TRUE(std::isnan(a)) << "at " << k;
        continue;
      }
      ASSERT_NEAR(a, b, atol + rtol * std::fabs(b)) << "at " << k;
    }
  }
}

std::vector<int64_t> labels(size_t n, int64_t classes, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> v(n);
  for (int64_t &x : v)
    x = int64_t(rng() % uint32_t(classes));
  return v;
}

TEST(CudaKernels, NllAndBceLosses) {
  REQUIRE_GPU();
  const int64_t rows = 700, c = 10;
  HostT lp = HostT::f32({rows, c}, randoms(rows * c));
  std::vector<int64_t> y = labels(rows, c, 3);
  for (size_t i = 0; i < y.size(); i += 7)
    y[i] = -100; // ignored rows
  HostT lab = HostT::i64({rows}, y);
  for (const char *red : {"mean", "sum"})
    compareMixed("graph.nll_loss", {lp, lab}, {HostT::zeros(DType::F32, {})},
                 {{"reduction", std::string(red)}}, 1e-5f, 1e-6f);
  compareMixed("graph.nll_loss", {lp, lab}, {HostT::zeros(DType::F32, {rows})},
               {{"reduction", std::string("none")}}, 0.0f, 0.0f);
  for (const char *red : {"mean", "sum", "none"}) {
    HostT g = std::string(red) == "none"
                  ? HostT::f32({rows}, randoms(rows, 1.0f, 4))
                  : HostT::f32({}, {0.75f});
    compareMixed("graph.nll_loss_backward", {lab, g},
                 {HostT::zeros(DType::F32, {rows, c})},
                 {{"reduction", std::string(red)}}, 1e-6f, 0.0f);
  }
  HostT x = HostT::f32({rows, c}, randoms(rows * c, 4.0f, 5));
  std::vector<float> tv = randoms(rows * c, 1.0f, 6);
  for (float &v : tv)
    v = 1.0f / (1.0f + std::exp(-v));
  HostT t = HostT::f32({rows, c}, tv);
  HostT pw = HostT::f32({c}, randoms(c, 1.0f, 7));
  for (const char *red : {"mean", "sum"}) {
    compareMixed("graph.binary_cross_entropy_with_logits", {x, t},
                 {HostT::zeros(DType::F32, {})},
                 {{"reduction", std::string(red)}}, 1e-4f, 1e-5f);
    compareMixed("graph.binary_cross_entropy_with_logits", {x, t, pw},
                 {HostT::zeros(DType::F32, {})},
                 {{"reduction", std::string(red)}}, 1e-4f, 1e-5f);
  }
  compareMixed("graph.binary_cross_entropy_with_logits", {x, t, pw},
               {HostT::zeros(DType::F32, {rows, c})},
               {{"reduction", std::string("none")}}, 1e-5f, 1e-6f);
  compareMixed("graph.cross_entropy", {x, t}, {HostT::zeros(DType::F32, {})},
               {{"label_smoothing", 0.1}}, 1e-4f, 1e-5f);
}

// argmax and gather pick values: bitwise equal. gather_backward's atomics
// sum in any order: a tolerance. cumsum runs the same float sums in order.
TEST(CudaKernels, ArgmaxGatherCumsum) {
  REQUIRE_GPU();
  const int64_t m = 300, n = 17;
  std::vector<float> xv = randoms(m * n);
  for (size_t i = 0; i < xv.size(); i += 5)
    xv[i] = 0.5f; // ties
  HostT x = HostT::f32({m, n}, xv);
  for (int64_t axis : {0, 1, -1})
    compareMixed("graph.argmax", {x},
                 {HostT::zeros(DType::I64, {axis == 0 ? n : m})},
                 {{"axis", axis}}, 0.0f, 0.0f);
  HostT idx = HostT::i64({m, 40}, labels(m * 40, n, 8));
  compareMixed("graph.gather", {x, idx}, {HostT::zeros(DType::F32, {m, 40})},
               {{"axis", int64_t(1)}}, 0.0f, 0.0f);
  compareMixed("graph.gather_backward",
               {idx, HostT::f32({m, 40}, randoms(m * 40, 1.0f, 9))},
               {HostT::zeros(DType::F32, {m, n})}, {{"axis", int64_t(1)}},
               1e-5f, 1e-5f);
  HostT idx0 = HostT::i64({5, n}, labels(5 * n, m, 10));
  compareMixed("graph.gather", {x, idx0}, {HostT::zeros(DType::F32, {5, n})},
               {{"axis", int64_t(0)}}, 0.0f, 0.0f);
  for (int64_t axis : {0, 1})
    compareMixed("graph.cumsum", {x}, {HostT::zeros(DType::F32, {m, n})},
                 {{"axis", axis}, {"reverse", axis == 1}}, 1e-5f, 1e-5f);
}

// conv_transpose2d against runtime/cpu: FP32 with and without a bias on
// square, rectangular (every attribute pair unequal, output_padding, groups)
// and 1x1-stride geometries (cuDNN's backward-data pass, or im2col), each
// twice (the second call takes the cached plan); then f16 operands, where a
// bias is blended into cuDNN's result (or added in col2im): with the PyTorch
// fixture's values every sum is exact, so the half results must equal the
// CPU library's bit for bit.
TEST(CudaKernels, ConvTranspose2d) {
  REQUIRE_GPU();
  struct Case {
    int64_t n, cin, h, w, coutPerGroup, kh, kw, groups;
    std::vector<int64_t> stride, padding, outputPadding, dilation;
  };
  const Case cases[] = {
      {2, 6, 5, 5, 4, 3, 3, 1, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      {3, 4, 4, 6, 3, 3, 2, 2, {2, 3}, {1, 0}, {1, 2}, {1, 2}},
      {1, 3, 7, 5, 2, 1, 1, 1, {1, 1}, {0, 0}, {0, 0}, {1, 1}},
  };
  for (const Case &k : cases) {
    int64_t cout = k.coutPerGroup * k.groups;
    int64_t oh = (k.h - 1) * k.stride[0] - 2 * k.padding[0] +
                 k.dilation[0] * (k.kh - 1) + k.outputPadding[0] + 1;
    int64_t ow = (k.w - 1) * k.stride[1] - 2 * k.padding[1] +
                 k.dilation[1] * (k.kw - 1) + k.outputPadding[1] + 1;
    std::vector<int64_t> xs{k.n, k.cin, k.h, k.w},
        ws{k.cin, k.coutPerGroup, k.kh, k.kw}, ys{k.n, cout, oh, ow};
    SCOPED_TRACE("conv_transpose2d " + std::to_string(k.h) + "x" +
                 std::to_string(k.w) + " groups " + std::to_string(k.groups));
    cpu::Attrs attrs{{"stride", k.stride},
                     {"padding", k.padding},
                     {"output_padding", k.outputPadding},
                     {"dilation", k.dilation},
                     {"groups", k.groups}};
    auto x = randoms(size_t(k.n * k.cin * k.h * k.w), 1, 11),
         w = randoms(size_t(k.cin * k.coutPerGroup * k.kh * k.kw), 1, 12),
         b = randoms(size_t(cout), 1, 13);
    for (int rep = 0; rep < 2; ++rep) {
      compareOp("graph.conv_transpose2d", {x, w, b}, {xs, ws, {cout}}, ys,
                attrs, 1e-4f, 1e-4f);
      compareOp("graph.conv_transpose2d", {x, w}, {xs, ws}, ys, attrs, 1e-4f,
                1e-4f);
    }
  }
  namespace fx = conv_transpose_fixture;
  auto halves = [](std::vector<int64_t> shape, const std::vector<float> &v) {
    return HostT{DType::F16, std::move(shape), bytesOf(v, DType::F16)};
  };
  HostT x = halves({2, 4, 3, 3}, fx::x()), w = halves({4, 3, 3, 2}, fx::w()),
        b = halves({6}, fx::b());
  cpu::Attrs attrs{{"stride", {2, 1}},
                   {"padding", {1, 0}},
                   {"output_padding", {1, 0}},
                   {"dilation", {1, 2}},
                   {"groups", int64_t(2)}};
  for (bool withBias : {true, false}) {
    SCOPED_TRACE(withBias ? "f16 with bias" : "f16 without bias");
    std::vector<HostT> ins = {x, w};
    if (withBias)
      ins.push_back(b);
    HostT cpuY = HostT::zeros(DType::F16, {2, 6, 6, 5}), devY = cpuY;
    std::vector<TensorRef> cin, gin;
    std::vector<std::unique_ptr<DevBuf>> dev;
    for (HostT &t : ins) {
      dev.push_back(std::make_unique<DevBuf>(t.bytes));
      cin.push_back(cpu::makeRef(t.bytes.data(), t.dtype, t.shape));
      gin.push_back(cpu::makeRef(dev.back()->p, t.dtype, t.shape));
    }
    DevBuf py(devY.bytes); // 0xff (NaN) filled by HostT::zeros
    TensorRef cy = cpu::makeRef(cpuY.bytes.data(), DType::F16, cpuY.shape),
              gy = cpu::makeRef(py.p, DType::F16, devY.shape);
    cpu::lookup("graph.conv_transpose2d")(cin, {&cy, 1}, attrs);
    cuda::lookup("graph.conv_transpose2d")(gin, {&gy, 1}, attrs, nullptr);
    cuda::check(cudaDeviceSynchronize(), "sync");
    devY.bytes = py.get();
    for (size_t k = 0; k < fx::y.size(); ++k) {
      float want = fx::y[k] - (withBias ? 0.0f : fx::b()[(k / 30) % 6]);
      ASSERT_EQ(loadFloat(cpuY.bytes.data() + 2 * k, DType::F16), want)
          << "cpu at " << k;
      ASSERT_EQ(loadFloat(devY.bytes.data() + 2 * k, DType::F16), want)
          << "cuda at " << k;
    }
  }
}

} // namespace

// adaptive_avg_pool2d, upsample_nearest2d and their backward ops against
// runtime/cpu: both sum each window (backward: each input's readers) in the
// same order, so the results agree exactly. Uneven overlapping windows,
// and nearest maps by 2 (aten's shortcut), by a size, by a float scale.
TEST(CudaKernels, AdaptivePoolAndNearestUpsample) {
  REQUIRE_GPU();
  compareOp("graph.adaptive_avg_pool2d", {randoms(2 * 3 * 5 * 7, 1, 8)},
            {{2, 3, 5, 7}}, {2, 3, 3, 4}, {}, 0, 0);
  compareOp("graph.adaptive_avg_pool2d_backward", {randoms(2 * 3 * 3 * 4, 1, 9)},
            {{2, 3, 3, 4}}, {2, 3, 5, 7}, {}, 0, 0);
  compareOp("graph.adaptive_avg_pool2d", {randoms(2 * 3 * 6 * 6, 1, 8)},
            {{2, 3, 6, 6}}, {2, 3, 1, 1}, {}, 0, 0);
  struct Case {
    std::vector<int64_t> xs, ys;
    cpu::Attrs attrs;
  };
  const Case cases[] = {
      {{2, 3, 4, 5}, {2, 3, 8, 10}, {{"scales_h", 2.0}, {"scales_w", 2.0}}},
      {{2, 3, 3, 4}, {2, 3, 5, 7}, {}},
      {{1, 2, 4, 3}, {1, 2, 5, 4}, {{"scales_h", 1.4}, {"scales_w", 1.6}}},
      {{1, 2, 5, 6}, {1, 2, 2, 4}, {}},
  };
  for (const Case &k : cases) {
    size_t nx = size_t(k.xs[0] * k.xs[1] * k.xs[2] * k.xs[3]);
    size_t ny = size_t(k.ys[0] * k.ys[1] * k.ys[2] * k.ys[3]);
    compareOp("graph.upsample_nearest2d", {randoms(nx, 1, 10)}, {k.xs}, k.ys,
              k.attrs, 0, 0);
    compareOp("graph.upsample_nearest2d_backward", {randoms(ny, 1, 11)},
              {k.ys}, k.xs, k.attrs, 0, 0);
  }
}

// upsample_bilinear2d and its backward against runtime/cpu, exactly: the
// same float operations (Resample.cu is compiled with --fmad=false) and the
// backward gathers each input's taps in the CPU kernel's scatter order.
// Up by 2, by a float scale pair, down by a size, align_corners, an
// unchanged size, and an input or output of one row or column.
TEST(CudaKernels, BilinearUpsample) {
  REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> xs, ys;
    cpu::Attrs attrs;
  };
  const Case cases[] = {
      {{2, 3, 4, 5}, {2, 3, 8, 10}, {{"scales_h", 2.0}, {"scales_w", 2.0}}},
      {{1, 2, 4, 3}, {1, 2, 5, 4}, {{"scales_h", 1.4}, {"scales_w", 1.6}}},
      {{1, 2, 7, 9}, {1, 2, 3, 4}, {}},
      {{2, 3, 3, 4}, {2, 3, 7, 9}, {{"align_corners", true}}},
      {{1, 2, 3, 4}, {1, 2, 3, 4}, {}},
      {{1, 2, 1, 5}, {1, 2, 3, 1}, {}},
      {{1, 2, 1, 5}, {1, 2, 3, 1}, {{"align_corners", true}}},
  };
  for (const Case &k : cases) {
    size_t nx = size_t(k.xs[0] * k.xs[1] * k.xs[2] * k.xs[3]);
    size_t ny = size_t(k.ys[0] * k.ys[1] * k.ys[2] * k.ys[3]);
    compareOp("graph.upsample_bilinear2d", {randoms(nx, 1, 12)}, {k.xs}, k.ys,
              k.attrs, 0, 0);
    compareOp("graph.upsample_bilinear2d_backward", {randoms(ny, 1, 13)},
              {k.ys}, k.xs, k.attrs, 0, 0);
  }
}

// lhs_transposed / rhs_transposed as cuBLASLt's transA / transB (or, with
// AMPC_CUDA_GEMM_TRANSPOSE=copy, the old transpose-copy path) against
// cblas' flags on the CPU, every flag pair, 2-D and batched.
TEST(CudaKernels, GemmTransposedOperands) {
  REQUIRE_GPU();
  const int64_t m = 33, k = 20, n = 17;
  for (int f = 0; f < 4; ++f) {
    bool ta = f & 1, tb = f & 2;
    SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    std::vector<int64_t> as = ta ? std::vector<int64_t>{k, m}
                                 : std::vector<int64_t>{m, k};
    std::vector<int64_t> bs = tb ? std::vector<int64_t>{n, k}
                                 : std::vector<int64_t>{k, n};
    cpu::Attrs attrs{{"lhs_transposed", ta}, {"rhs_transposed", tb}};
    compareOp("graph.matmul", {randoms(m * k), randoms(k * n, 1, 2)}, {as, bs},
              {m, n}, attrs, 1e-4f, 1e-4f);
    std::vector<int64_t> bas = {3, as[0], as[1]}, bbs = {3, bs[0], bs[1]};
    compareOp("graph.batch_matmul",
              {randoms(3 * m * k, 1, 3), randoms(3 * k * n, 1, 4)}, {bas, bbs},
              {3, m, n}, attrs, 1e-4f, 1e-4f);
  }
}

// graph.slice / slice_backward with perm (the attention head split in one
// strided copy): bit for bit the CPU's.
TEST(CudaKernels, SliceWithPerm) {
  REQUIRE_GPU();
  cpu::Attrs attrs{{"starts", {0, 0, 4, 0}},
                   {"limits", {2, 5, 8, 3}},
                   {"perm", {0, 2, 1, 3}}};
  compareOp("graph.slice", {randoms(2 * 5 * 12 * 3)}, {{2, 5, 12, 3}},
            {2, 4, 5, 3}, attrs, 0, 0);
  compareOp("graph.slice_backward", {randoms(2 * 4 * 5 * 3)}, {{2, 4, 5, 3}},
            {2, 5, 12, 3}, attrs, 0, 0);
}

// graph.concat with perm (attention's q/k/v gradients joined into the fused
// gradient in one copy), inputs of unequal sizes, and more inputs than one
// launch takes: bit for bit the CPU's (no value is zero, so equal values
// are equal bits), on the one-launch path and, with AMPC_CUDA_CONCAT=copies,
// the launch-per-input path before it.
TEST(CudaKernels, ConcatWithPerm) {
  REQUIRE_GPU();
  ScopedEnv env("AMPC_CUDA_CONCAT", nullptr);
  for (const char *path : {"joined", "copies"}) {
    SCOPED_TRACE(path);
    env.set(path);
    const size_t n = 2 * 4 * 5 * 3;
    compareOp("graph.concat",
              {randoms(n, 1, 1), randoms(n, 1, 2), randoms(n, 1, 3)},
              {{2, 4, 5, 3}, {2, 4, 5, 3}, {2, 4, 5, 3}}, {2, 5, 12, 3},
              {{"axis", int64_t(2)}, {"perm", {0, 2, 1, 3}}}, 0, 0);
    compareOp("graph.concat",
              {randoms(2 * 3, 1, 4), randoms(2 * 4 * 3, 1, 5),
               randoms(2 * 2 * 3, 1, 6)},
              {{2, 1, 3}, {2, 4, 3}, {2, 2, 3}}, {2, 7, 3},
              {{"axis", int64_t(1)}}, 0, 0);
    std::vector<std::vector<float>> nine;
    std::vector<std::vector<int64_t>> shapes;
    for (unsigned i = 0; i < 9; ++i) {
      nine.push_back(randoms(3 * 2, 1, 10 + i));
      shapes.push_back({3, 2});
    }
    compareOp("graph.concat", nine, shapes, {18, 3},
              {{"axis", int64_t(0)}, {"perm", {1, 0}}}, 0, 0);
  }
}
