//===- HostModel.cpp - The fixed half of a generated CPU model ------------===//
#include "runtime/cpu/HostModel.h"

#include "runtime/cpu/HalfBlocks.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ampc::cpu {

namespace {

// The memory plan's offsets assume this alignment of the arena's start.
constexpr uintptr_t kArenaAlign = 64;

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// A model that verified but does not fit in memory: one line saying what
// it needs and what could not be allocated, exit status 2 (as bad input),
// instead of std::bad_alloc terminating. The model is a static of the
// generated main(), built before trainMain could catch anything.
[[noreturn]] void outOfMemory(const rt::ModelSpec &spec, const char *what) {
  bool adam = spec.config.optimizer != "sgd";
  int copies = adam ? 4 : 3;
  uint64_t params = 0, half = 0, halfGrads = 0;
  for (const rt::ParamInfo &p : spec.params) {
    params += uint64_t(numElements(p.shape)) * 4;
    if (p.halfCopy)
      half += uint64_t(numElements(p.shape) + p.halfPadding) * 2;
    if (p.gradType != rt::DType::F32)
      halfGrads += uint64_t(numElements(p.shape)) * 2;
  }
  uint64_t arena = uint64_t(spec.arenaBytes);
  std::string halfPart =
      (half ? "; half weight copies " + std::to_string(half) : "") +
      (halfGrads ? "; half gradients " + std::to_string(halfGrads) : "");
  half += halfGrads;
  std::fprintf(stderr,
               "error: out of memory: model '%s' needs %llu bytes "
               "(parameters %llu x %d: FP32 masters, gradients and %s%s; "
               "arena %llu), could not allocate the %s\n",
               spec.name.c_str(),
               (unsigned long long)(params * copies + half + arena),
               (unsigned long long)params, copies,
               adam ? "2 optimizer moments" : "the momentum buffer",
               halfPart.c_str(), (unsigned long long)arena, what);
  std::exit(2);
}

} // namespace

std::vector<HostModel::Tensors>
HostModel::allocate(const rt::ModelSpec &spec, std::vector<float> &grads) {
  bool adam = spec.config.optimizer != "sgd";
  std::vector<Tensors> tensors;
  try {
    tensors.resize(spec.params.size());
    size_t total = 0;
    for (const rt::ParamInfo &p : spec.params)
      total += size_t(numElements(p.shape));
    grads.assign(total, 0.0f);
    for (size_t p = spec.params.size(), at = 0; p-- > 0;) {
      size_t n = size_t(numElements(spec.params[p].shape));
      tensors[p].g = std::span<float>(grads.data() + at, n);
      at += n;
    }
    for (size_t p = 0; p < spec.params.size(); ++p) {
      size_t n = size_t(numElements(spec.params[p].shape));
      tensors[p].w.assign(n, 0.0f);
      tensors[p].m.assign(n, 0.0f);
      if (adam)
        tensors[p].v.assign(n, 0.0f);
      if (spec.params[p].halfCopy) // zero padding rows after the copy
        tensors[p].h.assign(n + size_t(spec.params[p].halfPadding), 0);
      if (spec.params[p].gradType != rt::DType::F32)
        tensors[p].hg.assign(n, 0);
    }
  } catch (const std::exception &) { // bad_alloc, length_error
    outOfMemory(spec, "parameters");
  }
  return tensors;
}

std::vector<EpilogueTensor> HostModel::epilogueTensors() {
  std::vector<EpilogueTensor> out;
  for (Tensors &t : tensors_)
    out.push_back({t.g.data(), t.w.data(), t.m.data(),
                   t.v.empty() ? nullptr : t.v.data(), int64_t(t.w.size()),
                   t.h.empty() ? nullptr : t.h.data()});
  return out;
}

HostModel::HostModel(rt::ModelSpec spec)
    : SpecModel(std::move(spec)), tensors_(allocate(spec_, grads_)),
      epilogue_(epilogueTensors(),
                EpilogueConfig::fromCompileConfig(spec_.config)) {
  // One arena for every intermediate tensor (zeroed, like a fresh vector).
  try {
    arenaStorage_.resize(size_t(spec_.arenaBytes) + kArenaAlign);
  } catch (const std::exception &) { // bad_alloc, length_error
    outOfMemory(spec_, "arena");
  }
  for (const rt::ParamInfo &b : spec_.buffers)
    buffers_.emplace_back(size_t(numElements(b.shape)), 0.0f);
  arena_ = reinterpret_cast<std::byte *>(
      (reinterpret_cast<uintptr_t>(arenaStorage_.data()) + kArenaAlign - 1) &
      ~(kArenaAlign - 1));
}

void HostModel::initialize(uint64_t seed, const rt::Hyper &hyper) {
  seed_ = seed;
  for (size_t p = 0; p < tensors_.size(); ++p) {
    const rt::ParamInfo &info = spec_.params[p];
    Tensors &t = tensors_[p];
    num::fillInit(info.init, seed, num::streamId(info.name), t.w);
    std::fill(t.g.begin(), t.g.end(), 0.0f);
    std::fill(t.m.begin(), t.m.end(), 0.0f);
    std::fill(t.v.begin(), t.v.end(), 0.0f);
  }
  for (size_t k = 0; k < buffers_.size(); ++k) {
    const rt::ParamInfo &info = spec_.buffers[k];
    num::fillInit(info.init, seed, num::streamId(info.name), buffers_[k]);
  }
  state_ = HostState{};
  iteration_ = 0;
  halfStale_ = true;
  // Without loss scaling the gradients are of the loss itself.
  state_.scaler.scale =
      epilogue_.config().lossScale == EpilogueConfig::LossScale::None
          ? 1.0f
          : hyper.initScale;
  state_.scaler.hysteresisLeft = hyper.hysteresis;
}

void HostModel::setDataShard(int rank, int worldSize) {
  (void)worldSize; // dropout offsets its element index by the rank alone
  shard_ = rank;
}

void HostModel::forwardBackward(const void *const *inputs, int micro) {
  if (halfStale_) {
    for (Tensors &t : tensors_)
      if (!t.h.empty())
        castToHalf(t.w.data(), t.h.data(), int64_t(t.w.size()),
                   epilogue_.config().halfType);
    halfStale_ = false;
  }
  runForwardBackward(inputs, micro);
}

void HostModel::storeGrad(int param, const float *grad, int micro) {
  std::span<float> g = tensors_[param].g;
  if (micro == 0) {
    // The step may have written it in place (passes/GradInPlace.h).
    if (grad != g.data())
      std::memcpy(g.data(), grad, g.size() * sizeof(float));
    return;
  }
  for (size_t i = 0; i < g.size(); ++i)
    g[i] += grad[i];
}

void HostModel::storeGrad(int param, const num::half *grad, int micro) {
  std::span<float> g = tensors_[param].g;
  if (micro == 0) {
    halfToFloat(grad, g.data(), int64_t(g.size()));
    return;
  }
  for (size_t i = 0; i < g.size(); ++i)
    g[i] += float(grad[i]);
}

void HostModel::storeGrad(int param, const num::bf16 *grad, int micro) {
  std::span<float> g = tensors_[param].g;
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = micro == 0 ? float(grad[i]) : g[i] + float(grad[i]);
}

std::vector<rt::StateTensor> HostModel::stateTensors() {
  halfStale_ = true; // the caller may write the masters (a resume)
  std::vector<rt::StateTensor> s;
  for (size_t p = 0; p < tensors_.size(); ++p) {
    Tensors &t = tensors_[p];
    addStateTensors(s, p, t.w.data(), t.m.data(), t.v.data());
  }
  for (size_t k = 0; k < buffers_.size(); ++k)
    addBufferTensor(s, k, buffers_[k].data());
  return s;
}

} // namespace ampc::cpu
