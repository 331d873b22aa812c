//===- DataParallel.cpp - The data-parallel hook of the loop -------------===//
#include "runtime/train/DataParallel.h"

namespace ampc::rt {

void DataParallel::allReduceGradients(Model &model) const {
  if (worldSize == 1)
    return;
  // TODO(data-parallel issue): MPI_Allreduce (CPU) / ncclAllReduce (CUDA) of
  // model.grad(p) for p in params() (bucketed) and of *model.lossAccumulator().
  (void)model;
}

} // namespace ampc::rt
