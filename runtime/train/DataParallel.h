//===- DataParallel.h - The data-parallel side of the loop -------*- C++ -*-===//
//
// One process per rank, launched by `mpirun -np N BIN ...`; without a launcher
// the world has size 1 and every collective is a no-op. Between the
// micro-batches' forwardBackward() and step(), every rank's gradients
// (Model::grad, bucketed) and loss accumulator are summed over the ranks, and
// step() divides by micro-batches x worldSize. The fused epilogue then sees
// bitwise-identical gradients on every rank, so found_inf, the norm and the
// clip coefficient agree by construction (--check-agreement verifies it).
//
// Overlap (default; --overlap-allreduce=false or AMPC_OVERLAP_ALLREDUCE=off
// keep the old path): on a step's last micro-batch the model tells, through
// Model::setGradReadyHook, when each gradient is final, and its bucket
// starts then (GradBucketer::markReady) while the backward goes on; the
// buckets still start in index order, so every rank issues the same
// collectives and the sums are bitwise those of the old path. Earlier
// micro-batches only accumulate locally. One rank installs no hook.
//
// Sharding: the model file's batch B is per rank; a global batch is W*B
// samples of the epoch order and rank r takes samples [r*B, (r+1)*B) of it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TRAIN_DATAPARALLEL_H
#define AMPC_RUNTIME_TRAIN_DATAPARALLEL_H

#include "runtime/Model.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ampc::rt {

class Communicator;
class GradBucketer;

struct DataParallelOptions {
  double bucketMb = 25;               // FP32 gradient MiB per bucket
  std::optional<double> commTimeout;  // seconds; overrides AMPC_COMM_TIMEOUT
  std::string reduceDtype = "fp32";   // fp32 | fp16 | bf16
  float predivide = 1.0f;             // half reductions: g / p before the sum
  bool checkAgreement = false;        // debug: compare decisions and weights
  bool overlap = true;                // start buckets during the backward
};

// How many buckets started while the backward still ran (the run report).
struct OverlapStats {
  bool active = false;    // the hook is installed (world > 1, overlap on)
  size_t buckets = 0;     // per step
  size_t startedEarly = 0, started = 0; // since the start of the run
};

class DataParallel {
public:
  // Creates the communicator (MPI under mpirun, else world size 1) and tells
  // the model its shard. Bad options are InputErrors.
  DataParallel(Model &model, const DataParallelOptions &options);
  ~DataParallel();
  DataParallel(const DataParallel &) = delete;
  DataParallel &operator=(const DataParallel &) = delete;

  int rank() const { return rank_; }
  int worldSize() const { return world_; }
  bool isRoot() const { return rank_ == 0; } // metrics, output, checkpoints
  bool checksAgreement() const { return opts_.checkAgreement && world_ > 1; }

  // Before micro-batch |micro| of |accum|: with overlap, installs the
  // model's gradient-ready hook (once) and arms it for the last micro-batch
  // only. A no-op for one rank.
  void beforeMicroBatch(int micro, int accum);
  // Sums every grad(p) (bucketed) and lossAccumulator() over the ranks, in
  // place: waits for the buckets the backward started and reduces the rest.
  // A no-op for one rank.
  void allReduceGradients();
  OverlapStats overlapStats() const;
  // --check-agreement: aborts unless every rank took the same decision.
  void afterStep(const StepStats &stats);
  // --check-agreement: aborts unless every rank ends with bitwise-identical
  // state tensors and scaler; returns their checksum (0 when not checking).
  uint64_t checkStateAgreement();
  // Sums |n| doubles over the ranks (eval metrics).
  void sum(double *values, size_t n);
  // Start-up agreement check: |fields| (name, value) is everything that
  // must be equal on every rank (Train.cpp: model, compiled configuration,
  // hyper-parameters, run flags, data files). A no-op for one rank.
  // Round 1 all-reduces a fixed-size (hash, length) pair, so ranks whose
  // fingerprints differ in length never post mismatched receives; only
  // when they disagree does every rank broadcast its fingerprint, padded to
  // the longest. Then rank 0 prints one line naming the first differing
  // field and the ranks' values, and every rank exits with status 2.
  using Fingerprint = std::vector<std::pair<std::string, std::string>>;
  void checkRanksAgree(const Fingerprint &fields);
  // Ends the whole job with "ampc: error: rank R of W: MESSAGE".
  [[noreturn]] void abort(const std::string &message);

private:
  void makeBucketer();

  Model &model_;
  DataParallelOptions opts_;
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<GradBucketer> bucketer_;
  int rank_ = 0, world_ = 1;
  bool hooked_ = false; // setGradReadyHook accepted
  bool armed_ = false;  // this micro-batch's ready points mark buckets
};

} // namespace ampc::rt

#endif
