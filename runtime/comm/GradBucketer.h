//===- GradBucketer.h - Bucketed gradient all-reduce -------------*- C++ -*-===//
//
// Groups the FP32 gradient buffers, in the order given, into buckets of at
// most BucketOptions::bucketBytes of FP32 gradient (a buffer larger than a
// bucket is split across several; runtime/comm/BucketLayout.h), and
// all-reduces bucket by bucket. The
// bucket layout depends only on the buffer sizes and the options, so it is
// the same on every rank and every step; buckets are always launched in
// index order, so collectives match across ranks and results are
// deterministic for the same inputs.
//
// A bucket whose pieces are adjacent in memory is reduced in place; other
// buckets are packed into a staging buffer (allocated once), reduced and
// unpacked.
//
// Arithmetic, element by element (W = world size, p = predivide):
//   F32, sum:       g = sum_r g_r                         (FP32 adds)
//   F32, average:   g = (sum_r g_r) / W                   (one FP32 division)
//   F16/BF16:       h_r = half(g_r / p)                   (FP32 divide, one rounding)
//                   h   = sum_r h_r                       (each add rounded to half)
//                   sum:     g = float(h) * p
//                   average: g = float(h) / (W / p)       (W / p computed in FP32)
// The pre-divide (Megatron/DeepSpeed `gradient_predivide_factor`) keeps the
// half-precision sum from overflowing; p = W makes the reduction an average
// of pre-divided values. Gradients are loss-scaled, so an overflow in the
// half sum becomes inf and the fused epilogue skips the step, as it should.
//
// Overlap: markReady(t) says buffer t is final; every bucket whose buffers
// are all ready is started, in index order, on the communicator (on NCCL a
// started bucket runs on the communication stream while the backward goes
// on; pass the buffers in the order the backward finishes them: reverse
// params() order). On the device markReady may carry the event recorded on
// the producer stream right after the buffer's last kernel: a bucket whose
// buffers all came with one waits for those events (Communicator::
// orderAfter) instead of for everything queued on the producer stream when
// it starts, so it can start before the backward is even queued to its end
// (a replayed CUDA graph). finish() starts what is left, waits, unpacks and
// rearms. On host backends MPI progresses the reductions inside MPI calls,
// so they effectively complete in finish(). On the device (NCCL) only the
// FP32 sum is supported here: averaging and half packing need kernels, which
// belong to the CUDA target (the runtime divides in Model::step anyway).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_GRADBUCKETER_H
#define AMPC_RUNTIME_COMM_GRADBUCKETER_H

#include "runtime/comm/BucketLayout.h"
#include "runtime/comm/Communicator.h"

#include <cstddef>
#include <vector>

namespace ampc::rt {

enum class ReducePrecision { F32, F16, BF16 };

struct BucketOptions {
  size_t bucketBytes = size_t(25) << 20; // FP32 gradient bytes per bucket (DDP's default)
  ReducePrecision precision = ReducePrecision::F32;
  float predivide = 1.0f; // F16/BF16 only
  bool average = true;    // false: leave the sum (Model::step divides by accum * world)
};

struct GradBuffer {
  float *data = nullptr;
  size_t count = 0;
};

class GradBucketer {
public:
  using Segment = BucketSegment; // runtime/comm/BucketLayout.h

  GradBucketer(Communicator &comm, std::vector<GradBuffer> buffers, BucketOptions options = {});
  ~GradBucketer();
  GradBucketer(const GradBucketer &) = delete;
  GradBucketer &operator=(const GradBucketer &) = delete;

  size_t numBuckets() const { return buckets_.size(); }
  const std::vector<Segment> &segments(size_t bucket) const { return buckets_[bucket].segments; }
  bool inPlace(size_t bucket) const { return buckets_[bucket].staging == nullptr; }

  // Buffer |buffer| holds its final local gradient for this step. Device
  // buffers: |readyEvent| (a cudaEvent_t, or null) completes once it does.
  void markReady(size_t buffer, void *readyEvent = nullptr);
  // Reduces everything not yet started, waits for all buckets, and makes the
  // buffers hold the result. Ready for the next step afterwards.
  void finish();
  // markReady on every buffer, then finish().
  void allreduce() { finish(); }

  // Debug counters since construction: buckets started by markReady while
  // some buffer of their step was not ready yet (when the model marks from
  // inside its backward: before the backward's last gradient; never those
  // finish() starts), and buckets started.
  size_t startedEarly() const { return startedEarly_; }
  size_t startedTotal() const { return startedTotal_; }

private:
  struct Bucket {
    std::vector<Segment> segments;
    size_t count = 0;
    void *staging = nullptr; // null: reduced in place at segments[0]
    size_t waitingFor = 0;   // buffers not yet ready this step
    size_t buffersInBucket = 0;
    Communicator::Handle handle = 0;
    bool started = false;
    bool byEvents = false; // ordered after its buffers' ready events
  };
  // Device buffers: makes the communicator's next copies and collective
  // wait for |b|'s ready events when they all came with one.
  void orderAfterEvents(Bucket &b);
  void launchReady();
  void start(Bucket &b);
  void complete(Bucket &b);
  float *segmentData(const Segment &s) const { return buffers_[s.buffer].data + s.offset; }

  Communicator &comm_;
  std::vector<GradBuffer> buffers_;
  BucketOptions opts_;
  std::vector<Bucket> buckets_;
  std::vector<std::vector<size_t>> bucketsOfBuffer_;
  std::vector<bool> ready_;
  std::vector<void *> readyEvents_; // per buffer, this step (device only)
  size_t nextToStart_ = 0;
  size_t readyCount_ = 0; // buffers ready this step
  bool finishing_ = false;
  size_t startedEarly_ = 0, startedTotal_ = 0;
};

} // namespace ampc::rt

#endif
