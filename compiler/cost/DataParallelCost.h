//===- DataParallelCost.h - One rank's all-reduce, priced ---*- C++ -*-===//
//
// `ampc cost --world-size=N`: the rows of one rank's bucketed gradient
// all-reduce (runtime/comm/GradBucketer, with the runtime's own layout,
// runtime/comm/BucketLayout.h) and the timeline of the buckets on the
// communication stream, to see how much of it the backward hides.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_COST_DATAPARALLELCOST_H
#define AMPC_COMPILER_COST_DATAPARALLELCOST_H

#include "compiler/cost/CostReport.h"

#include <utility>
#include <vector>

namespace ampc::cost {

// Appends the all-reduce of one of dp.worldSize (> 1) ranks to |out|: per
// bucket its staging copies (when its pieces are not one range of memory)
// and the collective; then every staged bucket's unpacking (finish()) and
// the loss's all-reduce. Fills |cost|'s buckets (rows as indices of |out|)
// and, per bucket, |bucketParams|: the parameters (indices of |paramSizes|,
// Model::params() order) in it.
void appendAllReduce(const DataParallelSpec &dp, Target target,
                     llvm::ArrayRef<int64_t> paramSizes,
                     llvm::ArrayRef<std::string> paramNames,
                     std::vector<Launch> &out, DataParallelCost &cost,
                     std::vector<std::vector<size_t>> &bucketParams);

// With the rows priced: the buckets' ready, start and end times and the
// floor with the overlap (r.dataParallel). Rows [0, bodyEnd) are the
// micro-batches' (|firstOnly|: micro-batch 0's alone); |readyAt| pairs a
// parameter with the row after its gradient's hand-over (storeGrad), where
// the generated step calls gradReady.
void overlapAllReduce(CostReport &r, const DataParallelSpec &dp,
                      const std::vector<bool> &firstOnly, size_t bodyEnd,
                      llvm::ArrayRef<std::pair<size_t, size_t>> readyAt,
                      llvm::ArrayRef<std::vector<size_t>> bucketParams);

} // namespace ampc::cost

#endif
