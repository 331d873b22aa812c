//===- CudaNormEpilogueTest.cpp - Fused norms, packed epilogue -------------===//
//
// The fused layer/RMS norm kernels (one warp per row, packed loads) against
// the previous kernels (NormKernels::Rows) and the CPU library, with
// f32/f16/bf16 mixed per operand, the backward's column sums inline and
// split (NormSums); the epilogue's packed passes (every loop shape) against
// its element-wise ones (EpilogueOptions) with a small grid so each block
// loops over several chunks. Skipped without a
// GPU (bench/gpu.sh runs them).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/Epilogue.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Norm.h"
#include "test/unit/CudaTestUtil.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
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

// Runs |name| on the CPU and on the GPU with |kernels|; returns the GPU's
// outputs as floats after checking each against the CPU's within
// atol + rtol |cpu|.
std::vector<std::vector<float>>
runNorm(const char *name, cuda::NormKernels kernels,
        const std::vector<Operand> &ins, const std::vector<Operand> &outs,
        const cpu::Attrs &attrs, float rtol, float atol, size_t offset = 0) {
  std::vector<std::vector<unsigned char>> hostIn, hostOut;
  std::vector<std::unique_ptr<DevBuf>> dev;
  std::vector<TensorRef> cin, gin, cout, gout;
  hostIn.reserve(ins.size());
  hostOut.reserve(outs.size());
  for (const Operand &o : ins) {
    hostIn.push_back(bytesOf(o.values, o.dtype));
    dev.push_back(std::make_unique<DevBuf>(hostIn.back(), offset));
    cin.push_back(cpu::makeRef(hostIn.back().data(), o.dtype, o.shape));
    gin.push_back(cpu::makeRef(dev.back()->p, o.dtype, o.shape));
  }
  std::vector<DevBuf *> devOut;
  for (const Operand &o : outs) {
    // NaN-filled: an element the kernel never writes fails.
    hostOut.push_back(bytesOf(o.values, o.dtype));
    std::vector<unsigned char> nan(hostOut.back().size(), 0xff);
    dev.push_back(std::make_unique<DevBuf>(nan, offset));
    devOut.push_back(dev.back().get());
    cout.push_back(cpu::makeRef(hostOut.back().data(), o.dtype, o.shape));
    gout.push_back(cpu::makeRef(dev.back()->p, o.dtype, o.shape));
  }
  cpu::lookup(name)(cin, cout, attrs);
  cuda::setNormKernels(kernels);
  cuda::lookup(name)(gin, gout, attrs, nullptr);
  cuda::resetNormKernels();
  cuda::check(cudaDeviceSynchronize(), "sync");
  std::vector<std::vector<float>> got;
  for (size_t i = 0; i < outs.size(); ++i) {
    std::vector<float> want = floatsOf(hostOut[i], outs[i].dtype);
    got.push_back(floatsOf(devOut[i]->get(), outs[i].dtype));
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_NEAR(got[i][k], want[k], atol + rtol * std::fabs(want[k]))
          << name << " output " << i << " at " << k;
  }
  return got;
}

struct NormCase {
  int64_t m, d;
  DType x, w, y; // y: the output, and the backward's g and dx
};

std::string describe(const NormCase &c) {
  auto n = [](DType t) {
    return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16";
  };
  return std::to_string(c.m) + "x" + std::to_string(c.d) + " x " + n(c.x) +
         " w " + n(c.w) + " y " + n(c.y);
}

// Tolerances against the CPU: FP32 results differ only in summation order;
// a half result may round the other way (one ulp: 2^-10 f16, 2^-7 bf16).
float rtolFor(DType t) {
  return t == DType::F32 ? 2e-5f : t == DType::F16 ? 2e-3f : 1.6e-2f;
}

// Shapes: packed rows (d % 8 == 0: 96, GPT-2's 768, 1024 = the widest
// fused row), rows that are not (d = 1000, 13), more rows than the chunk
// limit, and d = 1030 (too wide: the previous kernels either way).
const NormCase kCases[] = {
    {600, 96, DType::F32, DType::F32, DType::F32},
    {37, 768, DType::F32, DType::F32, DType::F32},
    {5, 1000, DType::F32, DType::F32, DType::F32},
    {9, 13, DType::F32, DType::F32, DType::F32},
    {4100, 64, DType::F32, DType::F32, DType::F32},
    {3, 1024, DType::F32, DType::F32, DType::F32},
    {3, 1030, DType::F32, DType::F32, DType::F32},
    {64, 768, DType::BF16, DType::F32, DType::BF16},
    {64, 768, DType::F16, DType::F16, DType::F16},
    {33, 200, DType::F32, DType::BF16, DType::BF16},
    {33, 200, DType::BF16, DType::F32, DType::F32},
};

void checkNorm(const NormCase &c, bool rms) {
  SCOPED_TRACE(describe(c) + (rms ? " rms" : " layer"));
  const int64_t m = c.m, d = c.d;
  std::vector<float> x = randoms(m * d, 2.0f, 1, 0.5f);
  std::vector<Operand> fwdIn = {{x, c.x, {m, d}},
                                {randoms(d, 1.0f, 2, 1.0f), c.w, {d}}};
  if (!rms)
    fwdIn.push_back({randoms(d, 1.0f, 3), c.w, {d}});
  std::vector<Operand> fwdOut = {{std::vector<float>(m * d), c.y, {m, d}}};
  cpu::Attrs attrs{{"eps", 1e-5}};
  const char *fwd = rms ? "graph.rms_norm" : "graph.layer_norm";
  const char *bwd = rms ? "graph.rms_norm_backward" : "graph.layer_norm_backward";
  float rtol = std::max(rtolFor(c.y), rtolFor(c.x));
  auto fused = runNorm(fwd, cuda::NormKernels::Fused, fwdIn, fwdOut, attrs,
                       rtol, 1e-4f);
  auto rows = runNorm(fwd, cuda::NormKernels::Rows, fwdIn, fwdOut, attrs,
                      rtol, 1e-4f);
  // New against old: the same statistics in another order.
  for (size_t k = 0; k < fused[0].size(); ++k)
    ASSERT_NEAR(fused[0][k], rows[0][k], 1e-4f + rtol * std::fabs(rows[0][k]))
        << "fused vs rows at " << k;

  std::vector<Operand> bwdIn = {{x, c.x, {m, d}},
                                {randoms(d, 1.0f, 2, 1.0f), c.w, {d}},
                                {randoms(m * d, 1.0f, 4), c.y, {m, d}}};
  std::vector<Operand> bwdOut = {{std::vector<float>(m * d), c.y, {m, d}},
                                 {std::vector<float>(d), c.w, {d}}};
  if (!rms)
    bwdOut.push_back({std::vector<float>(d), c.w, {d}});
  // The weight/bias gradients sum m rows: their tolerance grows with m.
  float atol = 1e-4f * std::sqrt(float(m));
  float brtol = std::max(rtol, rtolFor(c.w));
  auto fusedB = runNorm(bwd, cuda::NormKernels::Fused, bwdIn, bwdOut, attrs,
                        brtol, atol);
  auto rowsB = runNorm(bwd, cuda::NormKernels::Rows, bwdIn, bwdOut, attrs,
                       brtol, atol);
  for (size_t i = 0; i < fusedB.size(); ++i)
    for (size_t k = 0; k < fusedB[i].size(); ++k)
      ASSERT_NEAR(fusedB[i][k], rowsB[i][k],
                  atol + brtol * std::fabs(rowsB[i][k]))
          << "backward output " << i << " fused vs rows at " << k;
  // The fused backward's column sums in its registers and split into the
  // column-sum kernels (cuda::NormSums), at every width: dx is one code
  // path (the same bits), the weight/bias sums another order.
  cuda::setNormSums(cuda::NormSums::Inline);
  auto inlineB = runNorm(bwd, cuda::NormKernels::Fused, bwdIn, bwdOut, attrs,
                         brtol, atol);
  cuda::setNormSums(cuda::NormSums::Split);
  auto splitB = runNorm(bwd, cuda::NormKernels::Fused, bwdIn, bwdOut, attrs,
                        brtol, atol);
  cuda::resetNormSums();
  EXPECT_TRUE(inlineB[0] == splitB[0]) << "dx, inline vs split sums";
  for (size_t i = 1; i < splitB.size(); ++i)
    for (size_t k = 0; k < splitB[i].size(); ++k)
      ASSERT_NEAR(splitB[i][k], inlineB[i][k],
                  atol + brtol * std::fabs(inlineB[i][k]))
          << "backward output " << i << " split vs inline sums at " << k;
}

TEST(CudaNorm, FusedLayerNormMatchesRowsAndCpu) {
  REQUIRE_GPU();
  for (const NormCase &c : kCases)
    checkNorm(c, false);
}

TEST(CudaNorm, FusedRmsNormMatchesRowsAndCpu) {
  REQUIRE_GPU();
  for (const NormCase &c : kCases)
    checkNorm(c, true);
}

// Tensors 8 bytes off 16-byte alignment: the fused kernels' element-wise
// loads, same results.
TEST(CudaNorm, FusedMisalignedTensorsTakeElementLoads) {
  REQUIRE_GPU();
  const int64_t m = 40, d = 256;
  std::vector<Operand> in = {{randoms(m * d, 1.0f, 5), DType::F32, {m, d}},
                             {randoms(d, 1.0f, 6), DType::F32, {d}},
                             {randoms(m * d, 1.0f, 7), DType::F32, {m, d}}};
  std::vector<Operand> out = {{std::vector<float>(m * d), DType::F32, {m, d}},
                              {std::vector<float>(d), DType::F32, {d}},
                              {std::vector<float>(d), DType::F32, {d}}};
  cpu::Attrs attrs{{"eps", 1e-5}};
  auto aligned = runNorm("graph.layer_norm_backward", cuda::NormKernels::Fused,
                         in, out, attrs, 2e-5f, 1e-3f);
  auto offset = runNorm("graph.layer_norm_backward", cuda::NormKernels::Fused,
                        in, out, attrs, 2e-5f, 1e-3f, 8);
  // Same arithmetic, only the loads differ: bitwise equal.
  EXPECT_EQ(aligned, offset);
}

// ---- The epilogue: packed against element-wise passes ------------------

struct EpiTensors {
  std::vector<std::unique_ptr<DevBuf>> bufs;
  std::vector<cuda::EpilogueTensor> ts;
};

// Gradients in |gt| (seeded), FP32 master/moments, a |ht| half copy. With
// |types|, gradient k is stored as types[k] instead (its values still
// |gt|'s: a half gradient, or its exact widening).
EpiTensors makeTensors(const std::vector<int64_t> &sizes, DType gt, DType ht,
                       float gradScale, bool moments, size_t offset = 0,
                       const std::vector<DType> &types = {}) {
  EpiTensors e;
  for (size_t k = 0; k < sizes.size(); ++k) {
    size_t n = size_t(sizes[k]);
    auto add = [&](const std::vector<unsigned char> &b) -> void * {
      e.bufs.push_back(std::make_unique<DevBuf>(b, offset));
      return e.bufs.back()->p;
    };
    cuda::EpilogueTensor t;
    std::vector<float> g = floatsOf(bytesOf(randoms(n, gradScale, 100 + k), gt), gt);
    DType stored = types.empty() ? gt : types[k];
    t.grad = add(bytesOf(g, stored));
    t.param = static_cast<float *>(add(bytesOf(randoms(n, 1.0f, 200 + k), DType::F32)));
    if (moments) {
      t.m = static_cast<float *>(add(bytesOf(randoms(n, 0.01f, 300 + k), DType::F32)));
      t.v = static_cast<float *>(add(bytesOf(randoms(n, 0.005f, 400 + k, 0.05f), DType::F32)));
    }
    t.half = add(bytesOf(std::vector<float>(n, 0.0f), ht));
    t.n = sizes[k];
    t.gradType = stored;
    e.ts.push_back(t);
  }
  return e;
}

cuda::DeviceState runSteps(const EpiTensors &e, const cuda::EpilogueConfig &cfg,
                           const rt::Hyper &h, cuda::EpilogueOptions opt,
                           bool wantPacked, int steps) {
  cuda::Epilogue epi(e.ts, cfg, opt);
  EXPECT_EQ(epi.packed(), wantPacked);
  if (opt.maxBlocks > 0) {
    EXPECT_LE(epi.pass1Blocks(), opt.maxBlocks);
    EXPECT_LE(epi.pass2Blocks(), opt.maxBlocks);
  }
  cuda::DeviceState s0;
  s0.scaler.scale = 1024.0f;
  DeviceCopy<cuda::DeviceState> stateCopy({s0});
  cuda::DeviceState *state = stateCopy.p;
  for (int i = 0; i < steps; ++i) {
    cuda::setStepInputs(state, h, 1.0f, nullptr);
    epi.run(state, nullptr);
  }
  cuda::DeviceState s = stateCopy.get()[0];
  return s;
}

// Sizes with tails (not multiples of 8) and several chunks per tensor.
const std::vector<int64_t> kSizes = {1000, 70001, 8, 5, 140000, 131072};

void expectSameTensors(const EpiTensors &a, const EpiTensors &b) {
  ASSERT_EQ(a.bufs.size(), b.bufs.size());
  for (size_t i = 0; i < a.bufs.size(); ++i)
    EXPECT_TRUE(a.bufs[i]->get() == b.bufs[i]->get()) << "buffer " << i;
}

// AdamW without clipping: the update does not depend on the norm, so the
// packed passes (a grid of 3 blocks looping over 10 chunks) write exactly
// what the element-wise ones (the full grid) write; the norms agree to
// rounding.
TEST(CudaEpilogue, PackedAdamWMatchesScalarBitwise) {
  REQUIRE_GPU();
  rt::Hyper h;
  h.lr = 1e-2f;
  h.weightDecay = 0.1f;
  cuda::EpilogueConfig cfg;
  cfg.halfType = DType::BF16;
  EpiTensors b = makeTensors(kSizes, DType::BF16, DType::BF16, 10.0f, true);
  cuda::DeviceState sb = runSteps(b, cfg, h, {false, 0}, false, 2);
  EXPECT_EQ(sb.step, 2);
  // Every loop shape (groups in flight per pass, streaming or not): whole
  // tiles, single groups and element tails all write the same.
  struct Shape {
    int p1, p2;
    bool stream;
  };
  for (Shape sh : {Shape{4, 2, false}, Shape{1, 1, false}, Shape{2, 4, true},
                   Shape{8, 2, true}, Shape{8, 4, false}}) {
    SCOPED_TRACE(testing::Message() << "pass1Groups " << sh.p1 << " pass2Groups "
                                    << sh.p2 << " streaming " << sh.stream);
    EpiTensors a = makeTensors(kSizes, DType::BF16, DType::BF16, 10.0f, true);
    cuda::EpilogueOptions opt{true, 3};
    opt.pass1Groups = sh.p1;
    opt.pass2Groups = sh.p2;
    opt.streaming = sh.stream;
    cuda::DeviceState sa = runSteps(a, cfg, h, opt, true, 2);
    EXPECT_EQ(sa.step, 2);
    EXPECT_EQ(sa.stats.skipped, 0);
    EXPECT_NEAR(sa.stats.gradNorm, sb.stats.gradNorm, 1e-5f * sb.stats.gradNorm);
    expectSameTensors(a, b);
  }
}

TEST(CudaEpilogue, LoopShapesOutsideTheListAreRefused) {
  REQUIRE_GPU();
  EpiTensors a = makeTensors({16}, DType::F32, DType::F16, 1.0f, true);
  cuda::EpilogueOptions opt;
  opt.pass1Groups = 3;
  EXPECT_THROW(cuda::Epilogue(a.ts, cuda::EpilogueConfig{}, opt),
               std::invalid_argument);
  opt.pass1Groups = 4;
  opt.pass2Groups = 8;
  EXPECT_THROW(cuda::Epilogue(a.ts, cuda::EpilogueConfig{}, opt),
               std::invalid_argument);
}

// Clipped by norm (FP32 gradients, f16 copy): the coefficient follows the
// norm, so the results agree to rounding; SGD with momentum bitwise.
TEST(CudaEpilogue, PackedClippedAndSgdMatchScalar) {
  REQUIRE_GPU();
  {
    rt::Hyper h;
    h.clipNorm = 0.5f;
    cuda::EpilogueConfig cfg;
    cfg.clipNorm = true;
    cfg.halfType = DType::F16;
    EpiTensors a = makeTensors(kSizes, DType::F32, DType::F16, 100.0f, true);
    EpiTensors b = makeTensors(kSizes, DType::F32, DType::F16, 100.0f, true);
    cuda::DeviceState sa = runSteps(a, cfg, h, {true, 2}, true, 1);
    cuda::DeviceState sb = runSteps(b, cfg, h, {false, 0}, false, 1);
    EXPECT_NEAR(sa.stats.gradNorm, sb.stats.gradNorm, 1e-5f * sb.stats.gradNorm);
    EXPECT_NEAR(sa.stats.clipCoef, sb.stats.clipCoef, 1e-5f * sb.stats.clipCoef);
    EXPECT_LT(sa.stats.clipCoef, 1.0f);
    for (size_t i = 0; i < a.bufs.size(); ++i) {
      if (i % 5 == 0)
        continue; // the gradients: unchanged inputs
      std::vector<unsigned char> x = a.bufs[i]->get(), y = b.bufs[i]->get();
      DType dt = i % 5 == 4 ? DType::F16 : DType::F32;
      std::vector<float> fx = floatsOf(x, dt), fy = floatsOf(y, dt);
      for (size_t k = 0; k < fx.size(); ++k)
        ASSERT_NEAR(fx[k], fy[k], 1e-6f + 2e-3f * std::fabs(fy[k]))
            << "buffer " << i << " at " << k;
    }
  }
  {
    rt::Hyper h;
    h.lr = 0.1f;
    h.momentum = 0.9f;
    cuda::EpilogueConfig cfg;
    cfg.optimizer = cuda::EpilogueConfig::Optimizer::Sgd;
    cfg.halfType = DType::F16;
    EpiTensors a = makeTensors(kSizes, DType::F16, DType::F16, 10.0f, true);
    EpiTensors b = makeTensors(kSizes, DType::F16, DType::F16, 10.0f, true);
    runSteps(a, cfg, h, {true, 4}, true, 2);
    runSteps(b, cfg, h, {false, 0}, false, 2);
    expectSameTensors(a, b);
  }
}

// One epilogue over bf16 and FP32 gradients (a model's linears and its
// norms: cuda::EpilogueTensor::gradType per tensor), packed and
// element-wise, updates and norms bitwise those of the same values all
// widened to FP32 (what DeviceModel runs with FP32 gradients required):
// every tensor's loads, packed or not, take its elements in one order.
TEST(CudaEpilogue, MixedGradientTypesAreTheirWidening) {
  REQUIRE_GPU();
  rt::Hyper h;
  h.lr = 1e-2f;
  h.weightDecay = 0.1f;
  h.clipNorm = 0.5f;
  cuda::EpilogueConfig cfg;
  cfg.clipNorm = true;
  cfg.halfType = DType::BF16;
  std::vector<DType> mixed, widened(kSizes.size(), DType::F32);
  for (size_t k = 0; k < kSizes.size(); ++k)
    mixed.push_back(k % 2 ? DType::F32 : DType::BF16);
  for (bool packed : {true, false}) {
    EpiTensors a = makeTensors(kSizes, DType::BF16, DType::BF16, 10.0f, true,
                               0, mixed);
    EpiTensors b = makeTensors(kSizes, DType::BF16, DType::BF16, 10.0f, true,
                               0, widened);
    cuda::DeviceState sa = runSteps(a, cfg, h, {packed, 0}, packed, 2);
    cuda::DeviceState sb = runSteps(b, cfg, h, {packed, 0}, packed, 2);
    EXPECT_EQ(sa.stats.gradNorm, sb.stats.gradNorm) << "packed " << packed;
    EXPECT_EQ(sa.stats.clipCoef, sb.stats.clipCoef) << "packed " << packed;
    EXPECT_LT(sa.stats.clipCoef, 1.0f);
    for (size_t i = 0; i < a.bufs.size(); ++i)
      if (i % 5 != 0) // the gradients: inputs, stored differently
        EXPECT_TRUE(a.bufs[i]->get() == b.bufs[i]->get())
            << "buffer " << i << ", packed " << packed;
  }
}

// A tensor off 16-byte alignment turns packing off for the whole epilogue
// (checked when it is built); an inf is still found and flagged, and the
// step skipped, through the grid-stride loops.
TEST(CudaEpilogue, MisalignedFallsBackAndOverflowStillSkips) {
  REQUIRE_GPU();
  rt::Hyper h;
  cuda::EpilogueConfig cfg;
  EpiTensors a = makeTensors(kSizes, DType::F32, DType::F16, 1.0f, true, 4);
  EpiTensors b = makeTensors(kSizes, DType::F32, DType::F16, 1.0f, true);
  cuda::DeviceState sa = runSteps(a, cfg, h, {true, 3}, false, 1);
  cuda::DeviceState sb = runSteps(b, cfg, h, {true, 3}, true, 1);
  EXPECT_NEAR(sa.stats.gradNorm, sb.stats.gradNorm, 1e-5f * sb.stats.gradNorm);
  expectSameTensors(a, b);

  float inf = INFINITY, nan = NAN;
  // Tensor 1 (70001 elements): its last element, the one-element tail of
  // its last chunk; tensor 4: an element of a packed access.
  float *g1 = static_cast<float *>(const_cast<void *>(b.ts[1].grad));
  float *g4 = static_cast<float *>(const_cast<void *>(b.ts[4].grad));
  cuda::check(cudaMemcpy(g1 + 70000, &inf, 4, cudaMemcpyHostToDevice), "inf");
  cuda::check(cudaMemcpy(g4 + 65541, &nan, 4, cudaMemcpyHostToDevice), "nan");
  std::vector<unsigned char> before = b.bufs[1 * 5 + 1]->get();
  cuda::Epilogue epi(b.ts, cfg, {true, 3});
  ASSERT_TRUE(epi.packed());
  cuda::DeviceState s0;
  s0.scaler.scale = 1024.0f;
  DeviceCopy<cuda::DeviceState> stateCopy({s0});
  cuda::DeviceState *state = stateCopy.p;
  cuda::setStepInputs(state, h, 1.0f, nullptr);
  epi.run(state, nullptr);
  std::vector<unsigned char> report(epi.reportBytes());
  cuda::check(cudaMemcpy(report.data(), epi.report(), report.size(),
                         cudaMemcpyDeviceToHost),
              "report");
  cuda::DeviceState s = stateCopy.get()[0];
  EXPECT_EQ(s.stats.skipped, 1);
  EXPECT_EQ(s.blocksDone, 0u);
  EXPECT_EQ(cuda::reportFlags(report.data(), int(kSizes.size())),
            (std::vector<uint8_t>{0, 1, 0, 0, 1, 0}));
  EXPECT_TRUE(b.bufs[1 * 5 + 1]->get() == before);
}

// The finaliser (the last block of pass 1) over more tensors than it has
// warps (41 against 16) and a tensor of more chunks than a warp has lanes
// (3 M elements: 46 chunks of 65536), an empty one among them: the global
// norm is the double reference's and the same bits on any grid; the
// overflow of tensor 37 (warp 5's third tensor) is attributed to it alone,
// counted once, and its flag cleared for the next, clean step.
TEST(CudaEpilogue, ManyTensorsAndChunksFinaliseToTheNorm) {
  REQUIRE_GPU();
  std::vector<int64_t> sizes;
  for (int k = 0; k < 40; ++k)
    sizes.push_back(k == 3 ? 3000000 : 1 + 997 * (k % 7));
  sizes.push_back(0);
  rt::Hyper h;
  h.lr = 0.1f;
  cuda::EpilogueConfig cfg;
  cfg.optimizer = cuda::EpilogueConfig::Optimizer::Sgd;
  EpiTensors e = makeTensors(sizes, DType::F32, DType::F16, 10.0f, true);
  double total = 0;
  for (const cuda::EpilogueTensor &t : e.ts) {
    std::vector<float> g(size_t(t.n));
    cuda::check(cudaMemcpy(g.data(), t.grad, g.size() * 4,
                           cudaMemcpyDeviceToHost),
                "grad");
    double ss = 0;
    for (float x : g)
      ss += double(x / 1024.0f) * double(x / 1024.0f); // runSteps' scale
    total += ss;
  }
  cuda::DeviceState s = runSteps(e, cfg, h, {true, 0}, true, 1);
  EXPECT_EQ(s.stats.skipped, 0);
  EXPECT_NEAR(s.stats.gradNorm, std::sqrt(total), 1e-5 * std::sqrt(total));
  // A grid of 3 blocks adds each chunk's sum the same way: same bits.
  EXPECT_EQ(runSteps(e, cfg, h, {true, 3}, true, 1).stats.gradNorm,
            s.stats.gradNorm);

  float inf = INFINITY, was = 0;
  float *g37 = static_cast<float *>(const_cast<void *>(e.ts[37].grad));
  cuda::check(cudaMemcpy(&was, g37 + 1, 4, cudaMemcpyDeviceToHost), "read");
  cuda::check(cudaMemcpy(g37 + 1, &inf, 4, cudaMemcpyHostToDevice), "inf");
  cuda::Epilogue epi(e.ts, cfg, {true, 0});
  cuda::DeviceState s0;
  s0.scaler.scale = 1024.0f;
  DeviceCopy<cuda::DeviceState> stateCopy({s0});
  auto step = [&] {
    cuda::setStepInputs(stateCopy.p, h, 1.0f, nullptr);
    epi.run(stateCopy.p, nullptr);
    std::vector<unsigned char> report(epi.reportBytes());
    cuda::check(cudaMemcpy(report.data(), epi.report(), report.size(),
                           cudaMemcpyDeviceToHost),
                "report");
    return cuda::reportFlags(report.data(), int(sizes.size()));
  };
  std::vector<uint8_t> want(sizes.size(), 0);
  want[37] = 1;
  EXPECT_EQ(step(), want);
  EXPECT_EQ(stateCopy.get()[0].stats.skipped, 1);
  cuda::check(cudaMemcpy(g37 + 1, &was, 4, cudaMemcpyHostToDevice), "back");
  EXPECT_EQ(step(), std::vector<uint8_t>(sizes.size(), 0));
  EXPECT_EQ(stateCopy.get()[0].stats.skipped, 0);
  std::vector<int64_t> counts(sizes.size(), 0);
  counts[37] = 1;
  EXPECT_EQ(epi.nonFiniteCounts(nullptr), counts);
}

} // namespace
