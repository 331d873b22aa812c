//===- Checkpoint.h - Saving and resuming training ---------------*- C++ -*-===//
//
// Layout of --checkpoint-dir:
//   step-00000100/model.safetensors   every Model::stateTensors() entry (F32)
//   step-00000100/train_state.json    counters, scaler, data position, seed,
//                                     hyper-parameters, model name, config
//   latest                            "step-00000100\n"
// A checkpoint directory is written as ".step-00000100.tmp" (files fsynced),
// then renamed into place, then `latest` is replaced atomically; a crash at
// any point leaves the previous checkpoint and pointer intact. Older
// checkpoints are kept.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CHECKPOINT_CHECKPOINT_H
#define AMPC_RUNTIME_CHECKPOINT_CHECKPOINT_H

#include "runtime/Model.h"

#include <cstdint>
#include <string>

namespace ampc::rt {

struct TrainState {
  int64_t iteration = 0; // steps run, skipped ones included
  int64_t epoch = 0, batchInEpoch = 0; // data position (Batcher)
  // To check the data on resume. batchSize is the global batch (ranks x
  // per-rank batch): the position above counts global batches, so any
  // number of ranks with the same global batch resumes it.
  int64_t numSamples = 0, batchSize = 0;
  int64_t worldSize = 1; // ranks that wrote it (informational)
  uint64_t seed = 0;
  Hyper hyper;
  float lastLoss = 0;
  // Read back from a checkpoint (saveCheckpoint takes them from the model).
  ScalerState scaler;
  int64_t optimizerStep = 0;
};

// "step-00000100"
std::string checkpointName(int64_t iteration);

// Writes a checkpoint of |model| and |state| under |dir| and points
// `latest` at it. Returns the checkpoint's directory.
std::string saveCheckpoint(const std::string &dir, Model &model,
                           const TrainState &state);

// A checkpoint directory from --resume: a checkpoint directory itself, a
// file inside one, or a --checkpoint-dir holding `latest`.
std::string resolveCheckpoint(const std::string &path);

// Reads |ckpt|/train_state.json and checks it is |model|'s.
TrainState readTrainState(const std::string &ckpt, const Model &model);

// Restores the model's state tensors (checking every tensor's presence and
// shape), scaler and optimizer step. Throws InputError.
void restoreCheckpoint(const std::string &ckpt, Model &model,
                       const TrainState &state);

} // namespace ampc::rt

#endif
