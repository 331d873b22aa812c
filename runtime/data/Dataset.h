//===- Dataset.h - Model inputs fed from files -------------------*- C++ -*-===//
//
// Rules (also in --help and docs/RUNTIME.md):
// - `--data NAME=PATH[:TOKENTYPE]` per model input. Dim 0 of an input is the
//   batch; a file holds N samples whose element count must equal the input's
//   per-sample count (28x28 IDX images feed [B,1,28,28] or [B,784]).
// - Values are converted to the input's dtype. Integer inputs accept only
//   integer data (range-checked). IDX u8 data into a float input is scaled by
//   1/255 (float(v) / 255.0f, as torchvision's ToTensor); .npy data is never
//   scaled.
// - Token files (.bin/.txt/.tok: raw little-endian tokens, u8 by default,
//   `:u16`, `:i32` or `:u32` to override) feed an integer input [B, T]: a
//   stream of L tokens gives N = (L-1)/T samples, sample i = tokens[iT, iT+T).
//   Shifted targets: every other integer input of the same shape named
//   `targets`, `target` or `labels` that has no --data of its own gets
//   tokens[iT+1, iT+T+1) from the same file.
// - All inputs of a dataset must have the same N.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_DATA_DATASET_H
#define AMPC_RUNTIME_DATA_DATASET_H

#include "runtime/Model.h"
#include "runtime/data/Array.h"
#include "runtime/kernels/Abi.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ampc::rt::data {

struct DataSpec {
  std::string input; // model input name
  std::string path;
  Elem tokenType = Elem::U8; // token files only
};

// Parses "name=path[:u8|u16|i32|u32]" items (already split at commas).
// |flag| ("--data") names the source in errors.
std::vector<DataSpec> parseDataSpecs(const std::vector<std::string> &items,
                                     const std::string &flag);

using kernels::dtypeSize; // bytes per element (runtime/kernels/Abi.h)
const char *dtypeName(DType t);
// "image f32[64,1,28,28]"
std::string describeInput(const TensorInfo &t);
int64_t perSampleCount(const TensorInfo &t);

struct Dataset {
  int64_t numSamples = 0;
  // One buffer per model input (model order), numSamples samples each, in
  // the input's dtype.
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<int64_t> sampleBytes;
  int64_t tokensPerSample = 0; // T of the token input, 0 if none

  // Copies the samples |indices| into |batch|[input] (resized as needed).
  void gather(std::span<const int64_t> indices,
              std::vector<std::vector<uint8_t>> &batch) const;
};

// Loads and checks every input; |context| > 0 must equal the T of token
// inputs. |flag| names the flag in errors about missing/unknown inputs.
Dataset loadDataset(const std::vector<TensorInfo> &inputs,
                    const std::vector<DataSpec> &specs, int64_t context,
                    const std::string &flag);

// A permutation of [0, n) for |epoch|: Fisher-Yates driven by Philox keyed
// on |seed|, so it depends on (seed, epoch) only.
std::vector<int64_t> epochPermutation(int64_t n, uint64_t seed, int64_t epoch);

// Hands out batches of consecutive samples of each epoch's permutation and
// drops the last partial batch of an epoch (unless keepPartialBatch()). The position (epoch, batch) is
// all a checkpoint needs to continue identically. In data-parallel runs the
// batch is the global one and each rank takes a contiguous slice of it
// (shard()), so every rank walks the same positions.
class Batcher {
public:
  Batcher(const Dataset &data, int64_t batchSize, uint64_t seed, bool shuffle);
  int64_t batchesPerEpoch() const { return batchesPerEpoch_; }
  int64_t epoch() const { return epoch_; }
  int64_t batchInEpoch() const { return batch_; }
  // Continues from batch |batch| of epoch |epoch|; batch == batchesPerEpoch()
  // is the end of that epoch. Throws InputError outside the data.
  void seek(int64_t epoch, int64_t batch);
  // From now on next() hands out only samples [offset, offset + count) of
  // each batch (rank r of W at per-rank batch B: offset r*B, count B).
  void shard(int64_t offset, int64_t count);
  // Fills |out| with the next batch (or its shard) and advances. Returns
  // how many of its samples are real: all of them, except in the last batch
  // of an epoch kept by keepPartialBatch().
  int64_t next(std::vector<std::vector<uint8_t>> &out);
  // drop_last=False: each epoch ends with the partial batch of its last
  // N mod B samples, padded to the full (static) batch with copies of them
  // (slot k holds real sample k mod R); the caller masks the padded rows.
  // With |ranks| > 1 (call after shard()) the R samples are split evenly
  // over the ranks (the first R mod ranks get one more), so every rank's
  // slice holds real samples; an epoch whose remainder is smaller than
  // |ranks| drops it (a rank with none would have no loss to average).
  void keepPartialBatch(int64_t ranks = 1);

private:
  const Dataset &data_;
  int64_t batchSize_, batchesPerEpoch_;
  uint64_t seed_;
  bool shuffle_;
  int64_t shardOffset_ = 0, shardCount_;
  int64_t epoch_ = 0, batch_ = 0;
  int64_t permEpoch_ = -1;
  int64_t ranks_ = 1; // keepPartialBatch()
  std::vector<int64_t> padded_;
  std::vector<int64_t> perm_;
};

} // namespace ampc::rt::data

#endif
