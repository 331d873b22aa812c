//===- Epilogue.cu - Unscale, check, norm, clip, optimizer, scaler ---------===//
#include "runtime/cuda/Epilogue.h"
#include "runtime/cuda/Common.cuh"
#include "runtime/numerics/Optimizer.h"
#include "runtime/numerics/Scaler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ampc::cuda {

using namespace detail;

namespace {

constexpr int kThreads = 512;

struct Chunk {
  int32_t tensor;
  int32_t firstOfTensor; // index of the tensor's first chunk
  int64_t begin, end;
};

struct Table {
  const EpilogueTensor *tensors;
  const Chunk *chunks;
  const int32_t *tensorFirst; // first chunk of each tensor, plus the end
  int numTensors, numChunks;
  float *partials;    // [numChunks]
  float *tensorNorms; // [numTensors]
  int32_t *flags;     // [numTensors] non-finite, cleared by the finaliser
  int64_t *counts;    // [numTensors] steps non-finite
  unsigned char *report; // Epilogue::report()
};

__device__ __forceinline__ float unscaled(const void *g, int dt, int64_t i,
                                          float inv) {
  return ld(g, dt, i) * inv;
}

__global__ void __launch_bounds__(kThreads)
    pass1(Table t, EpilogueConfig cfg, DeviceState *s) {
  __shared__ bool last;
  const Chunk c = t.chunks[blockIdx.x];
  const EpilogueTensor &e = t.tensors[c.tensor];
  // Every block derives the same inverse scale from the same inputs.
  float inv = s->gradDivisor == 1.0f
                  ? num::invScale(s->scaler.scale)
                  : float(1.0 / (double(s->scaler.scale) *
                                 double(s->gradDivisor)));
  int dt = int(cfg.gradType);
  float sum = 0.0f;
  bool bad = false;
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
    float raw = ld(e.grad, dt, i);
    bad |= !num::isFiniteFloat(raw);
    float v = raw * inv;
    sum += v * v;
  }
  sum = blockSum(sum);
  bool anyBad = blockSum(bad ? 1.0f : 0.0f) > 0.0f;
  if (threadIdx.x == 0) {
    t.partials[blockIdx.x] = sum;
    if (anyBad) {
      atomicOr(reinterpret_cast<int *>(&s->skip), 1); // skip: found_inf
      atomicOr(reinterpret_cast<int *>(&t.flags[c.tensor]), 1);
    }
    __threadfence();
    unsigned done = atomicAdd(&s->blocksDone, 1u);
    last = done == unsigned(t.numChunks) - 1;
  }
  __syncthreads();
  if (!last)
    return;
  // The last block: finalise in a fixed order.
  __threadfence();
  // Read before thread 0 below may set it.
  const bool refused = s->scaler.halted != 0;
  for (int k = threadIdx.x; k < t.numTensors; k += blockDim.x) {
    float ss = 0.0f;
    for (int j = t.tensorFirst[k]; j < t.tensorFirst[k + 1]; ++j)
      ss += t.partials[j];
    t.tensorNorms[k] = sqrtf(ss);
    // Overflow attribution; a refused step keeps the halting step's report.
    volatile int32_t *flag = &t.flags[k];
    if (!refused) {
      t.report[Epilogue::kReportFlags + k] = *flag != 0;
      t.counts[k] += *flag != 0;
    }
    *flag = 0;
  }
  __syncthreads();
  if (threadIdx.x != 0)
    return;
  float total = 0.0f;
  for (int k = 0; k < t.numTensors; ++k)
    total += t.tensorNorms[k] * t.tensorNorms[k];
  float norm = sqrtf(total);
  volatile int32_t *skipFlag = &s->skip;
  bool foundInf = *skipFlag != 0;
  const rt::Hyper &h = s->hyper;
  if (s->scaler.halted) {
    // Halted by an earlier step (num::finishStep): refuse this one. pass 2
    // sees skip and returns; the stats stay those of the halting step.
    *skipFlag = 1;
    s->lossAccumulator = 0.0f;
    num::refuseStep(s->scaler);
    s->blocksDone = 0;
    return;
  }
  rt::StepStats st;
  st.scaleUsed = s->scaler.scale;
  st.loss = s->lossAccumulator / s->gradDivisor;
  st.gradNorm = norm;
  st.skipped = foundInf ? 1 : 0;
  st.clipCoef = 1.0f;
  s->lossAccumulator = 0.0f;
  s->invScale = inv;
  s->clipCoef = 1.0f;
  if (cfg.clipNorm && !foundInf) {
    // clip_grad_norm_ multiplies even by 1 (a no-op on the value).
    st.clipCoef = num::clipCoef(h.clipNorm, norm);
    s->clipCoef = st.clipCoef;
  }
  if (!foundInf) {
    s->step += 1;
    s->firstStep = s->step == 1;
    s->adam = num::adamCoeffs(h.lr, h.beta1, h.beta2, h.eps, h.weightDecay,
                              cfg.optimizer == EpilogueConfig::Optimizer::AdamW,
                              s->step);
  }
  num::finishStep(s->scaler, foundInf,
                  cfg.lossScale == EpilogueConfig::LossScale::Dynamic,
                  rt::lossScaleParams(h));
  st.halted = s->scaler.halted;
  s->stats = st;
  *reinterpret_cast<rt::StepStats *>(t.report) = st;
  s->blocksDone = 0; // ready for the next step
}

__global__ void __launch_bounds__(kThreads)
    pass2(Table t, EpilogueConfig cfg, DeviceState *s) {
  if (s->skip)
    return; // an overflowing (or refused: halted) step changes nothing
  const Chunk c = t.chunks[blockIdx.x];
  const EpilogueTensor &e = t.tensors[c.tensor];
  const rt::Hyper &h = s->hyper;
  const float inv = s->invScale, coef = s->clipCoef;
  const int dt = int(cfg.gradType), ht = int(cfg.halfType);
  const float clip = h.clipValue;
  using Opt = EpilogueConfig::Optimizer;
  if (cfg.optimizer == Opt::Sgd) {
    const num::SgdCoeffs k = num::sgdCoeffs(h.lr, h.momentum, h.dampening,
                                            h.weightDecay, cfg.nesterov);
    const bool first = s->firstStep;
    for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
      float g = unscaled(e.grad, dt, i, inv);
      if (cfg.clipNorm)
        g = g * coef;
      if (cfg.clipValue)
        g = fminf(fmaxf(g, -clip), clip);
      float unused = 0.0f; // no buffer without momentum
      float p = num::sgdUpdate(e.param[i], g, k.mom != 0.0f ? e.m[i] : unused,
                               k, first);
      e.param[i] = p;
      if (e.half)
        st(e.half, ht, i, p);
    }
    return;
  }
  const num::AdamCoeffs k = s->adam;
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
    float g = unscaled(e.grad, dt, i, inv);
    if (cfg.clipNorm)
      g = g * coef;
    if (cfg.clipValue)
      g = fminf(fmaxf(g, -clip), clip);
    float p = num::adamUpdate(e.param[i], g, e.m[i], e.v[i], k);
    e.param[i] = p;
    if (e.half)
      st(e.half, ht, i, p);
  }
}

__global__ void setInputs(DeviceState *s, rt::Hyper h, float divisor) {
  s->hyper = h;
  s->gradDivisor = divisor;
  s->skip = 0;
}

struct Layout {
  size_t tensors, chunks, firsts, total;
};

Layout layoutOf(int numTensors, int numChunks) {
  auto up = [](size_t x) { return (x + 255) & ~size_t(255); };
  Layout l;
  l.tensors = 0;
  l.chunks = up(sizeof(EpilogueTensor) * size_t(numTensors));
  l.firsts = l.chunks + up(sizeof(Chunk) * size_t(numChunks));
  l.total = l.firsts + up(sizeof(int32_t) * size_t(numTensors + 1));
  return l;
}

} // namespace

Epilogue::Epilogue(std::vector<EpilogueTensor> tensors, EpilogueConfig config)
    : config_(config), numTensors_(int(tensors.size())) {
  std::vector<Chunk> chunks;
  std::vector<int32_t> firsts;
  for (int k = 0; k < numTensors_; ++k) {
    firsts.push_back(int32_t(chunks.size()));
    numel_ += tensors[k].n;
    for (int64_t b = 0; b < tensors[k].n; b += kEpilogueChunk)
      chunks.push_back({k, firsts.back(), b,
                        std::min(tensors[k].n, b + kEpilogueChunk)});
  }
  firsts.push_back(int32_t(chunks.size()));
  numChunks_ = int(chunks.size());
  Layout l = layoutOf(numTensors_, numChunks_);
  check(cudaMalloc(&table_, l.total), "cudaMalloc(epilogue table)");
  char *base = static_cast<char *>(table_);
  check(cudaMemcpy(base + l.tensors, tensors.data(),
                   sizeof(EpilogueTensor) * tensors.size(),
                   cudaMemcpyHostToDevice),
        "epilogue tensors");
  check(cudaMemcpy(base + l.chunks, chunks.data(), sizeof(Chunk) * chunks.size(),
                   cudaMemcpyHostToDevice),
        "epilogue chunks");
  check(cudaMemcpy(base + l.firsts, firsts.data(),
                   sizeof(int32_t) * firsts.size(), cudaMemcpyHostToDevice),
        "epilogue firsts");
  check(cudaMalloc(&partials_, sizeof(float) * size_t(numChunks_ + numTensors_ + 1)),
        "cudaMalloc(epilogue partials)");
  const size_t nt = size_t(std::max(numTensors_, 1));
  check(cudaMalloc(&flags_, sizeof(int32_t) * nt), "cudaMalloc(epilogue flags)");
  check(cudaMalloc(&counts_, sizeof(int64_t) * nt), "cudaMalloc(epilogue counts)");
  check(cudaMalloc(&report_, reportBytes()), "cudaMalloc(epilogue report)");
  check(cudaMemset(flags_, 0, sizeof(int32_t) * nt), "epilogue flags");
  check(cudaMemset(counts_, 0, sizeof(int64_t) * nt), "epilogue counts");
  std::vector<unsigned char> report(reportBytes(), 0);
  const rt::StepStats none;
  std::memcpy(report.data(), &none, sizeof none);
  check(cudaMemcpy(report_, report.data(), report.size(),
                   cudaMemcpyHostToDevice),
        "epilogue report");
}

Epilogue::~Epilogue() {
  cudaFree(table_);
  cudaFree(partials_);
  cudaFree(flags_);
  cudaFree(counts_);
  cudaFree(report_);
}

std::vector<int64_t> Epilogue::nonFiniteCounts(cudaStream_t stream) const {
  std::vector<int64_t> counts(size_t(numTensors_), 0);
  if (numTensors_ == 0)
    return counts;
  check(cudaStreamSynchronize(stream), "sync");
  check(cudaMemcpy(counts.data(), counts_, sizeof(int64_t) * counts.size(),
                   cudaMemcpyDeviceToHost),
        "epilogue counts");
  return counts;
}

void Epilogue::clearAttribution() {
  const size_t nt = size_t(std::max(numTensors_, 1));
  check(cudaMemset(flags_, 0, sizeof(int32_t) * nt), "epilogue flags");
  check(cudaMemset(counts_, 0, sizeof(int64_t) * nt), "epilogue counts");
  check(cudaDeviceSynchronize(), "epilogue clear");
}

rt::StepStats reportStats(const void *hostReport) {
  rt::StepStats st;
  std::memcpy(&st, hostReport, sizeof st);
  return st;
}

std::vector<uint8_t> reportFlags(const void *hostReport, int numTensors) {
  const auto *p =
      static_cast<const unsigned char *>(hostReport) + Epilogue::kReportFlags;
  return std::vector<uint8_t>(p, p + numTensors);
}

void Epilogue::run(DeviceState *state, cudaStream_t stream) const {
  if (numChunks_ == 0)
    return;
  Layout l = layoutOf(numTensors_, numChunks_);
  char *base = static_cast<char *>(table_);
  Table t{reinterpret_cast<const EpilogueTensor *>(base + l.tensors),
          reinterpret_cast<const Chunk *>(base + l.chunks),
          reinterpret_cast<const int32_t *>(base + l.firsts),
          numTensors_,
          numChunks_,
          partials_,
          partials_ + numChunks_,
          flags_,
          counts_,
          report_};
  pass1<<<numChunks_, kThreads, 0, stream>>>(t, config_, state);
  pass2<<<numChunks_, kThreads, 0, stream>>>(t, config_, state);
  checkLaunch("fused epilogue");
}

void setStepInputs(DeviceState *state, const rt::Hyper &hyper,
                   float gradDivisor, cudaStream_t stream) {
  setInputs<<<1, 1, 0, stream>>>(state, hyper, gradDivisor);
  checkLaunch("setStepInputs");
}

} // namespace ampc::cuda
