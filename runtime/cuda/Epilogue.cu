//===- Epilogue.cu - Unscale, check, norm, clip, optimizer, scaler ---------===//
#include "runtime/cuda/Epilogue.h"
#include "runtime/cuda/Common.cuh"
#include "runtime/cuda/Packed.cuh"
#include "runtime/kernels/EnvSwitch.h"
#include "runtime/numerics/Optimizer.h"
#include "runtime/numerics/Scaler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace ampc::cuda {

using namespace detail;

namespace {

constexpr int kThreads = 512;
static_assert(kThreads % 32 == 0, "the finaliser works in whole warps");

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
  bool packed;           // every tensor 16-byte aligned (Packed.cuh)
};

// Elements [begin, vecEnd) of a chunk go in groups of kGroup when packed.
__device__ __forceinline__ int64_t packedEnd(const Chunk &c, bool packed) {
  return packed ? c.begin + (c.end - c.begin) / kGroup * kGroup : c.begin;
}

// Calls body.template operator()<N>(first, stride) for the packed groups
// of [begin, vecEnd): N = U groups per thread, |stride| elements apart
// (thread t's groups t, t + blockDim, ...: each access of a warp one
// contiguous span), while whole tiles remain, then one at a time. All U
// groups' loads are issued before any is used: U accesses in flight per
// array and thread.
template <int U, class Body>
__device__ __forceinline__ void forGroups(int64_t begin, int64_t vecEnd,
                                          Body &&body) {
  const int64_t stride = int64_t(blockDim.x) * kGroup, tile = stride * U;
  const int64_t mine = int64_t(threadIdx.x) * kGroup;
  int64_t i = begin;
  for (; i + tile <= vecEnd; i += tile)
    body.template operator()<U>(i + mine, stride);
  for (i += mine; i < vecEnd; i += stride)
    body.template operator()<1>(i, stride);
}

template <int U>
__global__ void __launch_bounds__(kThreads)
    pass1(Table t, EpilogueConfig cfg, DeviceState *s) {
  __shared__ bool last;
  // Every block derives the same inverse scale from the same inputs.
  float inv = s->gradDivisor == 1.0f
                  ? num::invScale(s->scaler.scale)
                  : float(1.0 / (double(s->scaler.scale) *
                                 double(s->gradDivisor)));
  for (int ci = blockIdx.x; ci < t.numChunks; ci += gridDim.x) {
    const Chunk c = t.chunks[ci];
    const EpilogueTensor &e = t.tensors[c.tensor];
    const int dt = int(e.gradType);
    float sum = 0.0f;
    bool bad = false;
    const int64_t vecEnd = packedEnd(c, t.packed);
    forGroups<U>(c.begin, vecEnd, [&]<int N>(int64_t i, int64_t stride) {
      float raw[N][kGroup];
#pragma unroll
      for (int n = 0; n < N; ++n)
        ld4(e.grad, dt, i + n * stride, raw[n]);
#pragma unroll
      for (int n = 0; n < N; ++n)
#pragma unroll
        for (int k = 0; k < kGroup; ++k) {
          bad |= !num::isFiniteFloat(raw[n][k]);
          float v = raw[n][k] * inv;
          sum += v * v;
        }
    });
    for (int64_t i = vecEnd + threadIdx.x; i < c.end; i += blockDim.x) {
      float raw = ld(e.grad, dt, i);
      bad |= !num::isFiniteFloat(raw);
      float v = raw * inv;
      sum += v * v;
    }
    sum = blockSum(sum);
    bool anyBad = blockSum(bad ? 1.0f : 0.0f) > 0.0f;
    if (threadIdx.x == 0) {
      t.partials[ci] = sum;
      if (anyBad) {
        atomicOr(reinterpret_cast<int *>(&s->skip), 1); // skip: found_inf
        atomicOr(reinterpret_cast<int *>(&t.flags[c.tensor]), 1);
      }
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned done = atomicAdd(&s->blocksDone, 1u);
    last = done == gridDim.x - 1;
  }
  __syncthreads();
  if (!last)
    return;
  // The last block: finalise in a fixed order. A warp per tensor, each
  // lane adding every 32nd chunk sum in order, then a butterfly: the same
  // adds every step (deterministic), and no thread walks a large tensor's
  // hundreds of chunk sums alone (GPT-2's token table has 590).
  __threadfence();
  // Read before thread 0 below may set it.
  const bool refused = s->scaler.halted != 0;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  for (int k = warp; k < t.numTensors; k += warps) {
    float ss = 0.0f;
    for (int j = t.tensorFirst[k] + lane; j < t.tensorFirst[k + 1]; j += 32)
      ss += t.partials[j];
    for (int o = 16; o > 0; o >>= 1)
      ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane != 0)
      continue;
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
  if (warp != 0)
    return;
  // The norm of the tensors' norms (clip_grad_norm_'s), the same way.
  float total = 0.0f;
  for (int k = lane; k < t.numTensors; k += 32) {
    float n = t.tensorNorms[k];
    total += n * n;
  }
  for (int o = 16; o > 0; o >>= 1)
    total += __shfl_xor_sync(0xffffffffu, total, o);
  if (lane != 0)
    return;
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

// One element of pass 2: unscale, clip, update (SGD or Adam/AdamW).
struct Update {
  float inv, coef, clip;
  bool clipNorm, clipValue, sgd, first, momentum;
  num::SgdCoeffs sk;
  num::AdamCoeffs ak;
  __device__ float operator()(float raw, float p, float &m, float &v) const {
    float g = raw * inv;
    if (clipNorm)
      g = g * coef;
    if (clipValue)
      g = fminf(fmaxf(g, -clip), clip);
    if (sgd) {
      if (momentum)
        return num::sgdUpdate(p, g, m, sk, first);
      // No buffer without momentum. Two calls, not `momentum ? m : unused`:
      // a reference chosen at run time put the caller's packs in local
      // memory (a store after every load of the first moments).
      float unused = 0.0f;
      return num::sgdUpdate(p, g, unused, sk, first);
    }
    return num::adamUpdate(p, g, m, v, ak);
  }
};

template <int G, bool Stream>
__global__ void __launch_bounds__(kThreads)
    pass2(Table t, EpilogueConfig cfg, DeviceState *s) {
  if (s->skip)
    return; // an overflowing (or refused: halted) step changes nothing
  const rt::Hyper &h = s->hyper;
  using Opt = EpilogueConfig::Optimizer;
  Update u;
  u.inv = s->invScale;
  u.coef = s->clipCoef;
  u.clip = h.clipValue;
  u.clipNorm = cfg.clipNorm;
  u.clipValue = cfg.clipValue;
  u.sgd = cfg.optimizer == Opt::Sgd;
  u.first = s->firstStep;
  u.sk = num::sgdCoeffs(h.lr, h.momentum, h.dampening, h.weightDecay,
                        cfg.nesterov);
  u.momentum = u.sk.mom != 0.0f;
  u.ak = s->adam;
  // Which state the optimizer reads and writes besides the master.
  const bool useM = !u.sgd || u.momentum, useV = !u.sgd;
  const int ht = int(cfg.halfType);
  for (int ci = blockIdx.x; ci < t.numChunks; ci += gridDim.x) {
    const Chunk c = t.chunks[ci];
    const EpilogueTensor &e = t.tensors[c.tensor];
    const int dt = int(e.gradType);
    const int64_t vecEnd = packedEnd(c, t.packed);
    constexpr int F = int(DType::F32);
    forGroups<G>(c.begin, vecEnd, [&]<int N>(int64_t i, int64_t stride) {
      float g[N][kGroup], p[N][kGroup], m[N][kGroup] = {}, v[N][kGroup] = {};
#pragma unroll
      for (int n = 0; n < N; ++n) {
        const int64_t j = i + n * stride;
        ld4<Stream>(e.grad, dt, j, g[n]);
        ld4<Stream>(e.param, F, j, p[n]);
        if (useM)
          ld4<Stream>(e.m, F, j, m[n]);
        if (useV)
          ld4<Stream>(e.v, F, j, v[n]);
      }
#pragma unroll
      for (int n = 0; n < N; ++n)
#pragma unroll
        for (int k = 0; k < kGroup; ++k)
          p[n][k] = u(g[n][k], p[n][k], m[n][k], v[n][k]);
#pragma unroll
      for (int n = 0; n < N; ++n) {
        const int64_t j = i + n * stride;
        st4<Stream>(e.param, F, j, p[n]);
        if (useM)
          st4<Stream>(e.m, F, j, m[n]);
        if (useV)
          st4<Stream>(e.v, F, j, v[n]);
        if (e.half)
          st4<Stream>(e.half, ht, j, p[n]);
      }
    });
    for (int64_t i = vecEnd + threadIdx.x; i < c.end; i += blockDim.x) {
      float m = useM ? e.m[i] : 0.0f, v = useV ? e.v[i] : 0.0f;
      float p = u(ld(e.grad, dt, i), e.param[i], m, v);
      e.param[i] = p;
      if (useM)
        e.m[i] = m;
      if (useV)
        e.v[i] = v;
      if (e.half)
        st(e.half, ht, i, p);
    }
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

// AMPC_CUDA_EPILOGUE: unset, "" or "packed": packed accesses where the
// tensors allow; "scalar": element accesses everywhere (A/B timing).
bool scalarForced() {
  static const bool forced =
      kernels::envChoice("AMPC_CUDA_EPILOGUE", {"packed", "scalar"}) == 1;
  return forced;
}

// Whether every pointer the passes touch allows packed accesses (chunks
// start at multiples of kEpilogueChunk elements, so the base decides).
bool allPacked(const std::vector<EpilogueTensor> &ts,
               const EpilogueConfig &cfg) {
  for (const EpilogueTensor &e : ts)
    if (!packedOk(e.grad, e.gradType) || !packedOk(e.param, DType::F32) ||
        (e.m && !packedOk(e.m, DType::F32)) ||
        (e.v && !packedOk(e.v, DType::F32)) ||
        (e.half && !packedOk(e.half, cfg.halfType)))
      return false;
  return true;
}

using PassFn = void (*)(Table, EpilogueConfig, DeviceState *);

// The instantiations EpilogueOptions can pick (A/B timing: bench/).
PassFn pass1Of(int groups) {
  switch (groups) {
  case 1: return pass1<1>;
  case 2: return pass1<2>;
  case 4: return pass1<4>;
  case 8: return pass1<8>;
  }
  throw std::invalid_argument("epilogue: pass 1 takes 1, 2, 4 or 8 groups");
}
PassFn pass2Of(int groups, bool stream) {
  switch (groups * 2 + int(stream)) {
  case 2: return pass2<1, false>;
  case 3: return pass2<1, true>;
  case 4: return pass2<2, false>;
  case 5: return pass2<2, true>;
  case 8: return pass2<4, false>;
  case 9: return pass2<4, true>;
  }
  throw std::invalid_argument("epilogue: pass 2 takes 1, 2 or 4 groups");
}

// SM count x the blocks of |kernel| one SM keeps resident, at most
// |chunks| (and |maxBlocks| when set).
int gridOf(const void *kernel, int chunks, int maxBlocks) {
  int dev = 0, sms = 1, perSm = 1;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
        "SM count");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel,
                                                      kThreads, 0),
        "epilogue occupancy");
  int blocks = std::max(1, sms * std::max(perSm, 1));
  if (maxBlocks > 0)
    blocks = std::min(blocks, maxBlocks);
  return std::max(1, std::min(blocks, chunks));
}

} // namespace

Epilogue::Epilogue(std::vector<EpilogueTensor> tensors, EpilogueConfig config,
                   EpilogueOptions options)
    : config_(config), numTensors_(int(tensors.size())) {
  packed_ = options.packed && !scalarForced() && allPacked(tensors, config);
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
  PassFn p1 = pass1Of(options.pass1Groups),
         p2 = pass2Of(options.pass2Groups, options.streaming);
  pass1_ = reinterpret_cast<const void *>(p1);
  pass2_ = reinterpret_cast<const void *>(p2);
  if (numChunks_ > 0) {
    blocks1_ = gridOf(pass1_, numChunks_, options.maxBlocks);
    blocks2_ = gridOf(pass2_, numChunks_, options.maxBlocks);
  }
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
          report_,
          packed_};
  reinterpret_cast<PassFn>(pass1_)<<<blocks1_, kThreads, 0, stream>>>(
      t, config_, state);
  reinterpret_cast<PassFn>(pass2_)<<<blocks2_, kThreads, 0, stream>>>(
      t, config_, state);
  checkLaunch("fused epilogue");
}

void setStepInputs(DeviceState *state, const rt::Hyper &hyper,
                   float gradDivisor, cudaStream_t stream) {
  setInputs<<<1, 1, 0, stream>>>(state, hyper, gradDivisor);
  checkLaunch("setStepInputs");
}

} // namespace ampc::cuda
