//===- DataParallelCost.cpp - One rank's all-reduce in the cost report ----===//
#include "compiler/cost/DataParallelCost.h"

#include "runtime/comm/BucketLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ampc;
using namespace ampc::cost;

// DataParallel hands the gradients to the bucketer in reverse parameter
// order: buffer t is parameter n-1-t.
void ampc::cost::appendAllReduce(
    const DataParallelSpec &dp, Target target,
    llvm::ArrayRef<int64_t> paramSizes, llvm::ArrayRef<std::string> paramNames,
    std::vector<Launch> &out, DataParallelCost &cost,
    std::vector<std::vector<size_t>> &bucketParams) {
  const std::string copyName =
      target == Target::Cuda ? "cudaMemcpyAsync" : "memcpy";
  const size_t n = paramSizes.size();
  std::vector<size_t> counts;
  for (size_t t = 0; t < n; ++t)
    counts.push_back(size_t(paramSizes[n - 1 - t]));
  const bool half = dp.reduceDtype != "fp32";
  const double elem = half ? 2 : 4, w = double(dp.worldSize);
  auto layout = rt::bucketLayout(counts, dp.bucketBytes / sizeof(float));
  // Ring all-reduce of |elements| on the wire: each rank sends (and
  // receives) 2 (W-1)/W of its bytes and adds (W-1)/W of its elements; in
  // device memory it reads and writes them once (intermediate chunks not
  // counted).
  auto ring = [&](std::string op, std::string where, double bytes,
                  double elements) {
    Launch l = hostLaunch(target == Target::Cuda ? "ncclAllReduce"
                                                 : "MPI_Iallreduce",
                          std::move(op), std::move(where), Kind::Collective,
                          bytes, bytes, (w - 1) / w * elements, 1);
    l.linkBytes = 2 * (w - 1) / w * bytes;
    l.linkSteps = 2 * (dp.worldSize - 1);
    return l;
  };
  // The unpacking of every staged bucket, queued by finish() once all
  // buckets have started.
  std::vector<std::vector<Launch>> unpacks;
  for (auto [b, segments] : llvm::enumerate(layout)) {
    std::string where = llvm::formatv("bucket {0} of {1}", b, layout.size());
    // DeviceModel and HostModel lay the FP32 gradients out in this order,
    // DeviceModel padding each to 64 floats: a bucket is one range unless
    // a piece before the last ends a gradient whose size is not a multiple
    // of 64 on the CUDA target. Half wires always pack.
    bool adjacent = !half;
    for (size_t i = 0; i + 1 < segments.size() && adjacent; ++i)
      adjacent = target == Target::Cpu || counts[segments[i].buffer] % 64 == 0;
    double count = 0;
    std::vector<size_t> params;
    for (const rt::BucketSegment &seg : segments) {
      count += double(seg.count);
      params.push_back(n - 1 - seg.buffer);
    }
    size_t begin = out.size();
    auto segName = [&](const rt::BucketSegment &seg) {
      return paramNames[n - 1 - seg.buffer];
    };
    if (!adjacent)
      for (const rt::BucketSegment &seg : segments) {
        double c = double(seg.count);
        out.push_back(
            half ? hostLaunch("packHalf", "allreduce (pack)", segName(seg),
                              Kind::Runtime, 4 * c, 2 * c, 0, 1)
                 : hostLaunch(copyName, "allreduce (pack)", segName(seg),
                              Kind::Copy, 4 * c, 4 * c, 0, 1));
      }
    out.push_back(ring("allreduce", where, elem * count, count));
    std::vector<Launch> &unpack = unpacks.emplace_back();
    if (!adjacent)
      for (const rt::BucketSegment &seg : segments) {
        double c = double(seg.count);
        unpack.push_back(
            half ? hostLaunch("unpackHalf", "allreduce (unpack)", segName(seg),
                              Kind::Runtime, 2 * c, 4 * c, c, 1)
                 : hostLaunch(copyName, "allreduce (unpack)", segName(seg),
                              Kind::Copy, 4 * c, 4 * c, 0, 1));
      }
    BucketCost bc;
    bc.firstRow = int64_t(begin);
    bc.endRow = int64_t(out.size());
    bc.pieces = int64_t(segments.size());
    bc.elements = count;
    bc.bytes = elem * count;
    bc.staged = !adjacent;
    cost.bucketCosts.push_back(bc);
    bucketParams.push_back(std::move(params));
  }
  for (auto [b, unpack] : llvm::enumerate(unpacks)) {
    cost.bucketCosts[b].unpackRow = int64_t(out.size());
    llvm::append_range(out, unpack);
    cost.bucketCosts[b].unpackEndRow = int64_t(out.size());
  }
  // reduceLoss: the loss accumulator, one float.
  out.push_back(ring("reduceLoss", "loss", 4, 1));
}

// The step with the overlap (DataParallelCost): the compute stream runs
// the micro-batches' rows in order; a bucket becomes ready when the last
// micro-batch has handed over all its gradients, and the communication
// stream runs the buckets (staging copies and collective) in index order,
// each once it is ready and the one before is done. finish() then queues
// the unpacking copies, waits for them, and the loss all-reduce and the
// epilogue follow. Without the overlap (or on the CPU, where MPI
// progresses the reductions inside finish()) every bucket is ready when
// the backward ends: the serial sum of the rows. Contention between the
// two streams (NCCL's SMs, memory bandwidth) is not modelled.
void ampc::cost::overlapAllReduce(
    CostReport &r, const DataParallelSpec &dp,
    const std::vector<bool> &firstOnly, size_t bodyEnd,
    llvm::ArrayRef<std::pair<size_t, size_t>> readyAt,
    llvm::ArrayRef<std::vector<size_t>> bucketParams) {
  DataParallelCost &dpc = r.dataParallel;
  dpc.overlap = dp.overlap && r.target == Target::Cuda && dpc.buckets() > 0;
  auto total = [&](size_t i) {
    return r.rows[i].seconds * double(r.rows[i].launch.count);
  };
  // |last[k]|: the last micro-batch's time through its rows before row k.
  std::vector<double> last(bodyEnd + 1, 0.0);
  double before = 0; // the earlier micro-batches
  for (size_t i = 0; i < bodyEnd; ++i) {
    bool inLast = !firstOnly[i] || r.accumSteps == 1;
    double once = inLast ? r.rows[i].seconds : 0.0;
    last[i + 1] = last[i] + once;
    before += total(i) - once;
  }
  dpc.backwardSeconds = before + last[bodyEnd];
  llvm::DenseMap<size_t, size_t> paramReady; // param -> the row after
  for (auto [param, next] : readyAt)
    paramReady[param] = next;
  double commEnd = 0;
  for (auto [b, cost] : llvm::enumerate(dpc.bucketCosts)) {
    size_t next = bodyEnd;
    if (dpc.overlap) {
      next = 0;
      for (size_t p : bucketParams[b]) {
        auto it = paramReady.find(p);
        next = std::max(next, it == paramReady.end() ? bodyEnd : it->second);
      }
    }
    cost.readyAfterRow = int64_t(next) - 1;
    cost.readySeconds = before + last[next];
    cost.startSeconds = std::max(commEnd, cost.readySeconds);
    double seconds = 0;
    for (int64_t i = cost.firstRow; i < cost.endRow; ++i)
      seconds += total(size_t(i));
    cost.endSeconds = commEnd = cost.startSeconds + seconds;
    dpc.collectiveSeconds += seconds;
  }
  size_t afterBuckets = bodyEnd;
  for (const BucketCost &cost : dpc.bucketCosts) {
    for (int64_t i = cost.unpackRow; i < cost.unpackEndRow; ++i) {
      commEnd += total(size_t(i));
      dpc.collectiveSeconds += total(size_t(i));
    }
    afterBuckets = size_t(cost.unpackEndRow);
  }
  // reduceLoss and the epilogue, after finish().
  double after = 0;
  for (size_t i = afterBuckets; i < r.rows.size(); ++i) {
    after += total(i);
    if (r.rows[i].launch.kind == Kind::Collective)
      dpc.collectiveSeconds += total(i);
  }
  dpc.overlappedSeconds = std::max(dpc.backwardSeconds, commEnd) + after;
}
