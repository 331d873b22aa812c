//===- BucketLayout.h - The gradient pieces of each bucket ---*- C++ -*-===//
//
// The bucket layout of GradBucketer, on its own so that `ampc cost` can
// count the same buckets without the runtime: the buffers, in the order
// given, are concatenated and cut into buckets of at most |capElems|
// elements; a buffer larger than what is left of a bucket is split across
// buckets. It depends only on the sizes, so every rank gets the same layout.
// Header only (no communicator, no allocation beyond the vectors).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_BUCKETLAYOUT_H
#define AMPC_RUNTIME_COMM_BUCKETLAYOUT_H

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

// A contiguous piece of one buffer.
struct BucketSegment {
  size_t buffer;
  size_t offset;
  size_t count;
};

// The segments of each bucket, buckets in index order. Empty buffers are
// in no bucket.
inline std::vector<std::vector<BucketSegment>>
bucketLayout(const std::vector<size_t> &counts, size_t capElems) {
  const size_t cap = std::max<size_t>(1, capElems);
  std::vector<std::vector<BucketSegment>> buckets;
  std::vector<BucketSegment> cur;
  size_t filled = 0;
  for (size_t t = 0; t < counts.size(); ++t)
    for (size_t off = 0; off < counts[t];) {
      size_t n = std::min(cap - filled, counts[t] - off);
      cur.push_back({t, off, n});
      filled += n;
      off += n;
      if (filled == cap) { // a bucket closes when full
        buckets.push_back(std::move(cur));
        cur.clear();
        filled = 0;
      }
    }
  if (filled)
    buckets.push_back(std::move(cur));
  return buckets;
}

// The bytes of a bucket of --bucket-mb=|mb| (at least one float), or
// nothing unless |mb| is a positive number of MiB up to 1048576 (1 TiB):
// beyond that (or inf, NaN) the conversion to size_t is undefined.
static_assert(sizeof(size_t) >= 8, "1 TiB of bucket must fit a size_t");
inline std::optional<size_t> bucketBytesOfMb(double mb) {
  if (!(mb > 0) || !(mb <= 1048576.0))
    return std::nullopt;
  return std::max<size_t>(4, size_t(mb * 1048576.0));
}

// The most buckets a layout may have. Each is a collective a step and a
// vector of pieces: buckets of a few bytes over a large model would take
// gigabytes and millions of calls before the first step.
inline constexpr size_t kMaxBuckets = size_t(1) << 20;

// How many buckets bucketLayout(counts, capElems) makes, without making them.
inline size_t bucketCount(const std::vector<size_t> &counts, size_t capElems) {
  const size_t cap = std::max<size_t>(1, capElems);
  size_t total = 0;
  for (size_t c : counts)
    total += c;
  return total / cap + (total % cap != 0);
}

// Why --bucket-mb=|mb| cannot cut gradients of |counts| elements into
// buckets, or "" when it can. The training binary and `ampc cost` both
// refuse with it, each after its own spelling of the flag; with no counts
// only the size is checked.
inline std::string bucketSizeProblem(double mb,
                                     const std::vector<size_t> &counts = {}) {
  std::optional<size_t> bytes = bucketBytesOfMb(mb);
  if (!bytes)
    return mb > 0 ? "must be at most 1048576 (1 TiB)" : "must be positive";
  size_t n = bucketCount(counts, *bytes / sizeof(float));
  if (n > kMaxBuckets)
    return "cuts the gradients into " + std::to_string(n) +
           " buckets, more than " + std::to_string(kMaxBuckets) +
           "; give a larger size";
  return "";
}

} // namespace ampc::rt

#endif
