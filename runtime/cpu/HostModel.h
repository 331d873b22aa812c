//===- HostModel.h - The fixed half of a generated CPU model ----*- C++ -*-===//
//
// Generated CPU code defines one subclass of cpu::HostModel. The base owns
// everything that does not depend on the model: the metadata (from the
// rt::ModelSpec the subclass passes up), the FP32 masters, gradients and
// optimizer moments, the 64-byte aligned arena of the memory plan,
// initialization, gradient accumulation over micro-batches, the loss
// accumulator, the epilogue (cpu::Epilogue) and the checkpointed state. The
// subclass implements only the math the compiler generated: one micro-batch's
// forward and backward (runForwardBackward) and the forward alone
// (runEvaluate), reading the base through the protected accessors.
//
// cuda::DeviceModel is the same split on the GPU; the two read alike.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_HOSTMODEL_H
#define AMPC_RUNTIME_CPU_HOSTMODEL_H

#include "runtime/SpecModel.h"
#include "runtime/cpu/Epilogue.h"
#include "runtime/numerics/Half.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ampc::cpu {

class HostModel : public rt::SpecModel {
public:
  explicit HostModel(rt::ModelSpec spec);
  HostModel(const HostModel &) = delete;
  HostModel &operator=(const HostModel &) = delete;

  void initialize(uint64_t seed, const rt::Hyper &hyper) override;
  void beginStep(int64_t iteration) override { iteration_ = iteration; }
  void setDataShard(int rank, int worldSize) override;

  void forwardBackward(const void *const *inputs, int micro) override;
  float *grad(int param) override { return tensors_[param].g.data(); }
  float *lossAccumulator() override { return &state_.lossAccumulator; }
  bool setGradReadyHook(GradReadyHook hook) override {
    gradHook_ = std::move(hook);
    return true;
  }
  rt::StepStats step(const rt::Hyper &hyper, float gradDivisor) override {
    return epilogue_.run(state_, hyper, gradDivisor);
  }
  std::vector<uint8_t> nonFiniteGrads() override { return state_.nonFinite; }
  std::vector<int64_t> nonFiniteCounts() override {
    return state_.nonFiniteSteps;
  }
  void evaluate(const void *const *inputs, void *const *outputs) override {
    runEvaluate(inputs, outputs);
  }

  std::vector<rt::StateTensor> stateTensors() override;
  rt::ScalerState &scaler() override { return state_.scaler; }
  int64_t &optimizerStep() override { return state_.step; }

  // Bytes of the memory plan's arena (intermediates of one step).
  int64_t arenaBytes() const { return spec_.arenaBytes; }

protected:
  // Forward and backward of one micro-batch: adds its loss (addLoss) and
  // stores the gradients of loss * lossScale() (storeGrad).
  virtual void runForwardBackward(const void *const *inputs, int micro) = 0;
  // The forward pass (dropout off) into |outputs| (host memory).
  virtual void runEvaluate(const void *const *inputs,
                           void *const *outputs) = 0;

  float *weight(int param) { return tensors_[param].w.data(); }
  // The half copy of parameter |param| (rt::ParamInfo::halfCopy), current
  // whenever the step runs.
  void *halfWeight(int param) {
    std::vector<uint16_t> &h = tensors_[param].h;
    return h.empty() ? nullptr : h.data();
  }
  // Buffer |k| (graph.buffer, FP32): batch_norm updates it in place.
  float *buffer(int k) { return buffers_[k].data(); }
  std::byte *arena() { return arena_; }
  float lossScale() const { return state_.scaler.scale; }
  uint64_t seed() const { return seed_; }
  int64_t iteration() const { return iteration_; }
  int64_t shard() const { return shard_; }

  void addLoss(float loss) { state_.lossAccumulator += loss; }
  // Parameter |param|'s gradient of this micro-batch: written by micro-batch
  // 0 (nothing to copy when |grad| is grad(param) itself: the step wrote it
  // in place), added by the others.
  void storeGrad(int param, const float *grad, int micro);
  // A half gradient (rt::ParamInfo::gradType): widened into the FP32
  // gradient (micro-batch 0) or added to it (the others). Exact, so the
  // epilogue sees the values the step's cast to FP32 gave.
  void storeGrad(int param, const num::half *grad, int micro);
  void storeGrad(int param, const num::bf16 *grad, int micro);
  // Where micro-batch 0 writes a half gradient in place
  // (passes/GradInPlace.h) before storeGrad widens it.
  void *halfGrad(int param) { return tensors_[param].hg.data(); }
  // Parameter |param|'s gradient is final for this micro-batch (the
  // generated code calls it right after its last use): tells the
  // data-parallel hook, if any (Model::setGradReadyHook).
  void gradReady(int param) {
    if (gradHook_)
      gradHook_(param, nullptr);
  }

private:
  struct Tensors {
    std::vector<float> w, m, v; // master, moments (v: Adam)
    std::span<float> g;         // gradient, in grads_
    std::vector<uint16_t> h;    // half copy of w (F16 or BF16 bits)
    std::vector<uint16_t> hg;   // half gradient (gradType F16 or BF16)
  };

  // Every FP32 gradient in one block, in reverse parameter order: the order
  // the backward finishes them and DataParallel buckets them, so a bucket
  // is one range that MPI reduces in place (GradBucketer's adjacency
  // check), without a staging copy each way (as cuda::DeviceModel).
  std::vector<float> grads_;
  std::vector<Tensors> tensors_; // sized once: the epilogue keeps pointers
  std::vector<std::vector<float>> buffers_; // spec_.buffers, in order
  Epilogue epilogue_;
  HostState state_;
  uint64_t seed_ = 0;
  int64_t iteration_ = 0; // steps begun, skipped ones included
  int64_t shard_ = 0;     // data-parallel rank (dropout masks)
  // The masters may have changed outside the epilogue (initialize, or
  // pointers handed out by stateTensors: a resume): recast the half copies
  // before the next step reads them.
  bool halfStale_ = true;
  std::vector<std::byte> arenaStorage_;
  std::byte *arena_ = nullptr;
  GradReadyHook gradHook_; // data-parallel overlap; empty otherwise

  static std::vector<Tensors> allocate(const rt::ModelSpec &spec,
                                       std::vector<float> &grads);
  std::vector<EpilogueTensor> epilogueTensors();
};

} // namespace ampc::cpu

#endif
