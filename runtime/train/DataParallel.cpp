//===- DataParallel.cpp - The data-parallel side of the loop --------------===//
#include "runtime/train/DataParallel.h"
#include "runtime/comm/AmpSync.h"
#include "runtime/comm/BucketLayout.h"
#include "runtime/comm/Communicator.h"
#include "runtime/comm/GradBucketer.h"
#include "runtime/data/DataError.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ampc::rt {

static size_t numel(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= size_t(d);
  return n;
}

DataParallel::DataParallel(Model &model, const DataParallelOptions &o)
    : model_(model), opts_(o) {
  {
    std::vector<size_t> counts;
    for (const ParamInfo &p : model.params())
      counts.push_back(numel(p.shape));
    if (std::string why = bucketSizeProblem(o.bucketMb, counts); !why.empty())
      fail("--bucket-mb", why);
  }
  if (o.commTimeout && !(*o.commTimeout > 0))
    fail("--comm-timeout", "must be a positive number of seconds");
  if (o.reduceDtype != "fp32" && o.reduceDtype != "fp16" &&
      o.reduceDtype != "bf16")
    fail("--reduce-dtype", "unknown type '" + o.reduceDtype +
                               "' (fp32, fp16 or bf16)");
  if (!(o.predivide > 0))
    fail("--predivide", "must be positive");
  // NCCL sums the device gradients in FP32 only (GradBucketer): say so
  // before NCCL and the model are set up, not at the first step.
  if (o.reduceDtype != "fp32" && model.config().target == "cuda")
    fail("--reduce-dtype", "the CUDA target sums gradients in fp32 only (" +
                               o.reduceDtype + " is for the CPU target)");
  // The environment switch turns the overlap off without changing command
  // lines (to isolate a difference on a GPU machine).
  if (const char *e = std::getenv("AMPC_OVERLAP_ALLREDUCE"); e && *e) {
    std::string v = e;
    if (v != "on" && v != "off") {
      std::fprintf(stderr,
                   "error: AMPC_OVERLAP_ALLREDUCE=%s: expected 'on' or 'off'\n",
                   e);
      std::exit(1);
    }
    if (v == "off")
      opts_.overlap = false;
  }
  CommOptions co = commOptionsFromEnv();
  if (o.commTimeout)
    co.timeoutSeconds = *o.commTimeout;
  co.gpu = model.config().target == "cuda";
  comm_ = createCommunicator(Backend::Auto, co);
  rank_ = comm_->rank();
  world_ = comm_->size();
  model_.setDataShard(rank_, world_);
  if (world_ > 1) // the all-reduce sums FP32 gradients
    model_.requireFloatGrads();
}

DataParallel::~DataParallel() {
  // The model may train again (tests call trainMain twice): no hook into a
  // dead bucketer.
  if (hooked_)
    model_.setGradReadyHook({});
}

void DataParallel::makeBucketer() {
  // A GPU model computes on its own (non-blocking) stream: the collectives
  // must start after the backward queued there, not after the legacy
  // default stream (NCCL's producer unless set). The other direction needs
  // nothing more: finish() and reduceLoss() block until the communication
  // stream is done, so step() queues the epilogue after the reduced data.
  if (void *stream = model_.computeStream())
    comm_->setProducerStream(stream);
  // In the order the backward finishes them (reverse params() order), so
  // a backend that overlaps can start the last layers' buckets first.
  std::vector<GradBuffer> grads;
  for (int i = int(model_.params().size()) - 1; i >= 0; --i)
    grads.push_back({model_.grad(i), numel(model_.params()[size_t(i)].shape)});
  BucketOptions bo;
  bo.bucketBytes = *bucketBytesOfMb(opts_.bucketMb); // checked above
  bo.precision = opts_.reduceDtype == "fp16"   ? ReducePrecision::F16
                 : opts_.reduceDtype == "bf16" ? ReducePrecision::BF16
                                               : ReducePrecision::F32;
  bo.predivide = opts_.predivide;
  bo.average = false; // Model::step divides by accum * world
  bucketer_ = std::make_unique<GradBucketer>(*comm_, std::move(grads), bo);
}

void DataParallel::beforeMicroBatch(int micro, int accum) {
  if (world_ == 1 || !opts_.overlap)
    return;
  if (!bucketer_)
    makeBucketer();
  if (!hooked_) {
    // Buffer t of the bucketer is parameter n-1-t.
    const int n = int(model_.params().size());
    hooked_ = model_.setGradReadyHook([this, n](int param, void *event) {
      if (armed_)
        bucketer_->markReady(size_t(n - 1 - param), event);
    });
  }
  // Earlier micro-batches only add to the local gradients.
  armed_ = micro == accum - 1;
}

void DataParallel::allReduceGradients() {
  if (world_ == 1)
    return;
  if (!bucketer_)
    makeBucketer();
  armed_ = false;
  bucketer_->finish();
  reduceLoss(*comm_, model_.lossAccumulator());
}

OverlapStats DataParallel::overlapStats() const {
  OverlapStats s;
  s.active = hooked_;
  if (bucketer_) {
    s.buckets = bucketer_->numBuckets();
    s.startedEarly = bucketer_->startedEarly();
    s.started = bucketer_->startedTotal();
  }
  return s;
}

void DataParallel::afterStep(const StepStats &stats) {
  if (opts_.checkAgreement && world_ > 1)
    checkAgreement(*comm_, stats);
}

// FNV-1a over the bytes.
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

uint64_t DataParallel::checkStateAgreement() {
  if (!opts_.checkAgreement)
    return 0;
  uint64_t h = 14695981039346656037ull;
  for (const StateTensor &t : model_.stateTensors())
    if (!t.perRank) // buffers: per-rank statistics, as PyTorch's BatchNorm
      h = fnv(h, t.data, numel(t.shape) * sizeof(float));
  const ScalerState &s = model_.scaler();
  h = fnv(h, &s.scale, sizeof s.scale);
  h = fnv(h, &s.growthTracker, sizeof s.growthTracker);
  h = fnv(h, &s.skippedSteps, sizeof s.skippedSteps);
  h = fnv(h, &model_.optimizerStep(), sizeof(int64_t));
  if (world_ > 1) {
    // max and max of the complement: equal on every rank iff all agree.
    int64_t hi = int64_t(h >> 1), v[2] = {hi, ~hi};
    comm_->hostAllreduce(v, 2, CommType::I64, ReduceOp::Max);
    if (v[0] != hi || ~v[1] != hi)
      abort("ranks end with different weights, optimizer or scaler state "
            "(state checksum differs)");
  }
  return h;
}

void DataParallel::sum(double *values, size_t n) {
  if (world_ > 1)
    comm_->hostAllreduce(values, n, CommType::F64, ReduceOp::Sum);
}

void DataParallel::checkRanksAgree(const Fingerprint &fields) {
  if (world_ == 1)
    return;
  // "name\0value\0" per field; names are never empty, so the zero padding
  // of round 2 ends the list.
  std::string mine;
  for (const auto &[name, value] : fields) {
    mine += name;
    mine += '\0';
    mine += value;
    mine += '\0';
  }
  uint64_t h = fnv(14695981039346656037ull, mine.data(), mine.size());
  // Round 1, fixed size: max of (hash, ~hash, length, -length). Equal on
  // every rank iff every rank has the same hash and length.
  const int64_t hi = int64_t(h), len = int64_t(mine.size());
  int64_t v[4] = {hi, ~hi, len, -len};
  comm_->hostAllreduce(v, 4, CommType::I64, ReduceOp::Max);
  if (v[0] == ~v[1] && v[2] == -v[3])
    return;
  // Round 2: every rank's fingerprint, each broadcast from its owner at the
  // longest length (every rank knows it from round 1).
  const size_t maxLen = size_t(v[2]);
  std::vector<Fingerprint> all(static_cast<size_t>(world_));
  std::vector<char> buf(maxLen);
  for (int r = 0; r < world_; ++r) {
    std::fill(buf.begin(), buf.end(), '\0');
    if (r == rank_)
      std::memcpy(buf.data(), mine.data(), mine.size());
    comm_->broadcast(buf.data(), maxLen, r);
    size_t i = 0;
    auto next = [&] {
      size_t e = i;
      while (e < maxLen && buf[e])
        ++e;
      std::string s(buf.data() + i, e - i);
      i = e + 1;
      return s;
    };
    while (i < maxLen && buf[i]) {
      std::string name = next();
      std::string value = i < maxLen ? next() : std::string();
      all[size_t(r)].emplace_back(std::move(name), std::move(value));
    }
  }
  // The first field (position) where some rank differs from rank 0.
  auto at = [&](int r, size_t k) -> std::pair<std::string, std::string> {
    const Fingerprint &f = all[size_t(r)];
    if (k < f.size())
      return f[k];
    return {"(none)", "(nothing)"};
  };
  size_t n = 0;
  for (const Fingerprint &f : all)
    n = std::max(n, f.size());
  std::string message = "ranks disagree on the start-up fingerprint";
  for (size_t k = 0; k < n; ++k) {
    auto ref = at(0, k);
    std::vector<int> differ;
    for (int r = 1; r < world_; ++r)
      if (at(r, k) != ref)
        differ.push_back(r);
    if (differ.empty())
      continue;
    bool sameName = true;
    for (int r : differ)
      sameName = sameName && at(r, k).first == ref.first;
    auto describe = [&](int r) {
      auto f = at(r, k);
      return "rank " + std::to_string(r) + " has " +
             (sameName ? f.second : "\"" + f.first + "\"");
    };
    message = "ranks disagree on \"" + ref.first + "\"";
    if (!sameName)
      message += " (a field rank 0 has where another has a different one)";
    message += ": " + describe(0);
    const size_t shown = 3;
    for (size_t j = 0; j < differ.size() && j < shown; ++j)
      message += ", " + describe(differ[j]);
    if (differ.size() > shown)
      message += " (and " + std::to_string(differ.size() - shown) +
                 " more ranks differ)";
    break;
  }
  std::fflush(stdout);
  if (rank_ == 0)
    std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  // Every rank leaves the same way, after the others heard the verdict:
  // status 2, MPI finalized at exit (no abort, no backtrace).
  comm_->barrier();
  std::exit(2);
}

void DataParallel::abort(const std::string &message) {
  comm_->abort(message);
  std::abort(); // GCC does not carry [[noreturn]] through the virtual call
}

} // namespace ampc::rt
