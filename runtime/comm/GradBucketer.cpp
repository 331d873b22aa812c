//===- GradBucketer.cpp - Bucketed gradient all-reduce --------------------===//

#include "runtime/comm/GradBucketer.h"
#include "runtime/numerics/Half.h"

#include <algorithm>
#include <type_traits>

namespace ampc::rt {

namespace {
CommType wireType(ReducePrecision p) {
  switch (p) {
  case ReducePrecision::F32: return CommType::F32;
  case ReducePrecision::F16: return CommType::F16;
  case ReducePrecision::BF16: return CommType::BF16;
  }
  return CommType::F32;
}

template <typename H> void packHalf(H *dst, const float *src, size_t n, float predivide) {
  for (size_t i = 0; i < n; ++i) {
    float q = predivide == 1.0f ? src[i] : src[i] / predivide;
    if constexpr (std::is_same_v<H, num::half>)
      dst[i] = num::roundToHalf(q);
    else
      dst[i] = num::bf16(q);
  }
}

template <typename H>
void unpackHalf(float *dst, const H *src, size_t n, bool average, float predivide,
                float world) {
  float postDivisor = world / predivide;
  for (size_t i = 0; i < n; ++i) {
    float v = float(src[i]);
    dst[i] = average ? v / postDivisor : v * predivide;
  }
}
} // namespace

GradBucketer::GradBucketer(Communicator &comm, std::vector<GradBuffer> buffers,
                           BucketOptions options)
    : comm_(comm), buffers_(std::move(buffers)), opts_(options),
      bucketsOfBuffer_(buffers_.size()), ready_(buffers_.size(), false),
      readyEvents_(buffers_.size(), nullptr) {
  bool half = opts_.precision != ReducePrecision::F32;
  if (half && !(opts_.predivide > 0))
    comm_.abort("gradient bucketing: the pre-divide factor must be positive");
  if (comm_.memory() == Memory::Device && (half || opts_.average))
    comm_.abort("gradient bucketing on the device supports only the FP32 sum "
                "(average=false, precision=F32); Model::step divides by accum * world");

  std::vector<size_t> counts;
  for (const GradBuffer &b : buffers_)
    counts.push_back(b.count);
  for (auto &segments :
       bucketLayout(counts, opts_.bucketBytes / sizeof(float))) {
    Bucket b;
    for (const Segment &s : segments)
      b.count += s.count;
    b.segments = std::move(segments);
    buckets_.push_back(std::move(b));
  }

  size_t elem = commTypeSize(wireType(opts_.precision));
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket &k = buckets_[b];
    bool adjacent = !half;
    for (size_t i = 0; i + 1 < k.segments.size() && adjacent; ++i)
      adjacent = segmentData(k.segments[i]) + k.segments[i].count ==
                 segmentData(k.segments[i + 1]);
    if (!adjacent)
      k.staging = comm_.allocate(k.count * elem);
    for (const Segment &s : k.segments)
      if (bucketsOfBuffer_[s.buffer].empty() || bucketsOfBuffer_[s.buffer].back() != b) {
        bucketsOfBuffer_[s.buffer].push_back(b);
        ++k.buffersInBucket;
      }
    k.waitingFor = k.buffersInBucket;
  }
}

GradBucketer::~GradBucketer() {
  for (Bucket &b : buckets_)
    if (b.staging)
      comm_.deallocate(b.staging);
}

void GradBucketer::markReady(size_t buffer, void *readyEvent) {
  if (buffer >= buffers_.size())
    comm_.abort("gradient bucketing: markReady(" + std::to_string(buffer) + ") of " +
                std::to_string(buffers_.size()) + " buffers");
  if (ready_[buffer])
    comm_.abort("gradient bucketing: buffer " + std::to_string(buffer) +
                " marked ready twice in one step");
  ready_[buffer] = true;
  ++readyCount_;
  readyEvents_[buffer] = readyEvent;
  for (size_t b : bucketsOfBuffer_[buffer])
    --buckets_[b].waitingFor;
  launchReady();
}

// Starts buckets strictly in index order so every rank issues the same
// sequence of collectives whatever order its buffers became ready in.
void GradBucketer::launchReady() {
  while (nextToStart_ < buckets_.size() && buckets_[nextToStart_].waitingFor == 0)
    start(buckets_[nextToStart_++]);
}

// Device buffers: when every buffer of the bucket came with its ready
// event, its copies and collective wait for those events alone; otherwise
// (a buffer marked by finish()) for all the work queued on the producer
// stream so far, which includes every buffer's kernels.
void GradBucketer::orderAfterEvents(Bucket &b) {
  if (!b.byEvents)
    return;
  for (size_t i = 0; i < b.segments.size(); ++i)
    if (i == 0 || b.segments[i].buffer != b.segments[i - 1].buffer)
      comm_.orderAfter(readyEvents_[b.segments[i].buffer]);
}

void GradBucketer::start(Bucket &b) {
  b.byEvents = comm_.memory() == Memory::Device;
  for (const Segment &s : b.segments)
    b.byEvents = b.byEvents && readyEvents_[s.buffer];
  orderAfterEvents(b);
  ++startedTotal_;
  if (!finishing_ && readyCount_ < buffers_.size())
    ++startedEarly_;
  void *wire = b.staging ? b.staging : segmentData(b.segments[0]);
  if (b.staging) {
    size_t at = 0;
    for (const Segment &s : b.segments) {
      switch (opts_.precision) {
      case ReducePrecision::F32:
        comm_.copy(static_cast<float *>(b.staging) + at, segmentData(s), s.count * sizeof(float));
        break;
      case ReducePrecision::F16:
        packHalf(static_cast<num::half *>(b.staging) + at, segmentData(s), s.count,
                 opts_.predivide);
        break;
      case ReducePrecision::BF16:
        packHalf(static_cast<num::bf16 *>(b.staging) + at, segmentData(s), s.count,
                 opts_.predivide);
        break;
      }
      at += s.count;
    }
  }
  b.handle = comm_.startAllreduce(wire, b.count, wireType(opts_.precision), ReduceOp::Sum);
  b.started = true;
}

void GradBucketer::complete(Bucket &b) {
  comm_.wait(b.handle);
  b.started = false;
  // Unpacking follows the collective on the comm stream already; the
  // events keep it from waiting for the rest of the producer's work too.
  orderAfterEvents(b);
  float world = float(comm_.size());
  size_t at = 0;
  for (const Segment &s : b.segments) {
    float *g = segmentData(s);
    switch (opts_.precision) {
    case ReducePrecision::F32:
      if (b.staging)
        comm_.copy(g, static_cast<float *>(b.staging) + at, s.count * sizeof(float));
      if (opts_.average)
        for (size_t i = 0; i < s.count; ++i)
          g[i] = g[i] / world;
      break;
    case ReducePrecision::F16:
      unpackHalf(g, static_cast<num::half *>(b.staging) + at, s.count, opts_.average,
                 opts_.predivide, world);
      break;
    case ReducePrecision::BF16:
      unpackHalf(g, static_cast<num::bf16 *>(b.staging) + at, s.count, opts_.average,
                 opts_.predivide, world);
      break;
    }
    at += s.count;
  }
  if (b.byEvents)
    comm_.orderAfter(nullptr);
}

void GradBucketer::finish() {
  finishing_ = true;
  for (size_t t = 0; t < buffers_.size(); ++t)
    if (!ready_[t])
      markReady(t);
  finishing_ = false;
  for (Bucket &b : buckets_)
    complete(b);
  comm_.flush(); // the device copies back from staging are asynchronous
  // Rearm for the next step.
  std::fill(ready_.begin(), ready_.end(), false);
  std::fill(readyEvents_.begin(), readyEvents_.end(), nullptr);
  readyCount_ = 0;
  for (Bucket &b : buckets_)
    b.waitingFor = b.buffersInBucket;
  nextToStart_ = 0;
}

} // namespace ampc::rt
