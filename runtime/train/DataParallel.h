//===- DataParallel.h - The data-parallel hook of the loop -------*- C++ -*-===//
//
// Between the micro-batches' forwardBackward() and step(), every rank's
// gradients (Model::grad) and loss accumulator (Model::lossAccumulator) are
// summed over ranks; step() then divides by micro-batches x worldSize.
// Only world size 1 exists today: the MPI/NCCL implementation goes here.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TRAIN_DATAPARALLEL_H
#define AMPC_RUNTIME_TRAIN_DATAPARALLEL_H

#include "runtime/Model.h"

namespace ampc::rt {

struct DataParallel {
  int rank = 0;
  int worldSize = 1;
  bool isRoot() const { return rank == 0; } // writes metrics, checkpoints

  // Sums grad(p) for every parameter and lossAccumulator() over all ranks,
  // in place. A no-op for one rank.
  void allReduceGradients(Model &model) const;
};

} // namespace ampc::rt

#endif
