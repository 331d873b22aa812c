//===- Checkpoint.h - Saving and resuming training ---------------*- C++ -*-===//
//
// Layout of --checkpoint-dir:
//   step-00000100/model.safetensors   the model's state_dict: parameters and
//                                     buffers (the Model::stateTensors()
//                                     entries not marked optimizer), F32,
//                                     under the model file's names, so
//                                     nn.Module.load_state_dict takes it
//   step-00000100/optimizer.safetensors  the optimizer state (moments)
//   step-00000100/train_state.json    counters, scaler, data position, seed,
//                                     hyper-parameters, model name, config,
//                                     size and CRC-32 of both files
//   latest                            "step-00000100\n"
// A checkpoint directory is written as ".step-00000100.tmp" (files fsynced),
// then renamed into place, then `latest` is replaced atomically; a crash at
// any point leaves the previous checkpoint and pointer intact. Older
// checkpoints are kept.
//
// Nothing read back is trusted: readTrainState checks every field's type,
// range and consistency (one line naming the field, exit 2), and
// restoreCheckpoint verifies the recorded size and CRC-32 of each file
// before reading it (a checkpoint from before the "files" field is not
// verified).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CHECKPOINT_CHECKPOINT_H
#define AMPC_RUNTIME_CHECKPOINT_CHECKPOINT_H

#include "runtime/Model.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

struct TrainState {
  int64_t iteration = 0; // steps run, skipped ones included
  int64_t epoch = 0, batchInEpoch = 0; // data position (Batcher)
  // To check the data on resume. batchSize is the global batch (ranks x
  // per-rank batch): the position above counts global batches, so any
  // number of ranks with the same global batch resumes it.
  int64_t numSamples = 0, batchSize = 0;
  int64_t worldSize = 1; // ranks that wrote it (informational)
  // Whether the position counts batches of the shuffled order (--shuffle;
  // a checkpoint from before it was recorded: true).
  bool shuffle = true;
  uint64_t seed = 0;
  Hyper hyper;
  float lastLoss = 0;
  // Training forwards run (micro-batches, skipped steps included): the value
  // of every batch_norm num_batches_tracked counter (Model::batchCounters).
  int64_t batchesTracked = 0;
  // Read back from a checkpoint (saveCheckpoint takes them from the model).
  ScalerState scaler;
  int64_t optimizerStep = 0;
  // Read back only. The size and CRC-32 recorded of each file (none in a
  // checkpoint from before they were recorded), and the "tensors" shapes.
  struct FileSum {
    std::string name; // in the checkpoint directory
    uint64_t bytes = 0;
    uint32_t crc32 = 0;
  };
  std::vector<FileSum> files;
  std::optional<std::map<std::string, std::vector<int64_t>>> tensorShapes;
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

// Reads |ckpt|/train_state.json, checks every field (type, range, the
// counters' and the data position's consistency) and that it is |model|'s.
// Throws InputError: "PATH: field "data.epoch": must be >= 0 (got -1)".
TrainState readTrainState(const std::string &ckpt, const Model &model);

// The checks of a resumed state against this run's hyper-parameters (the
// checkpoint's, overridden by flags): the scaler's counters must be within
// this run's growth interval and hysteresis.
void checkResumedScaler(const std::string &ckpt, const TrainState &state,
                        const Hyper &hyper);

// Verifies each file's recorded size and CRC-32, then restores the model's
// state tensors (checking every tensor's presence and shape, each in its
// file), scaler and optimizer step. A checkpoint from before the split (all
// in model.safetensors, no optimizer.safetensors listed) still resumes; a
// missing optimizer.safetensors otherwise is an error. Throws InputError.
void restoreCheckpoint(const std::string &ckpt, Model &model,
                       const TrainState &state);

// The first hyper-parameter of |h| outside its valid range (non-finite,
// lr < 0, beta1 >= 1, ...): sets |name| (HyperParams.def's) and returns the
// problem ("must be >= 0 (got -1)"); "" when all are valid.
std::string checkHyper(const Hyper &h, std::string *name);

} // namespace ampc::rt

#endif
