//===- AmpSync.h - One loss-scaling decision for all ranks -------*- C++ -*-===//
//
// How ranks agree on skip-on-overflow and the clip coefficient. The runtime
// relies on construction, not on a vote: the gradients are all-reduced
// (GradBucketer) BEFORE Model::step(), and every collective backend returns
// bitwise-identical results on every rank, so the fused epilogue computes
// found_inf, the global norm and the clip coefficient from identical data
// and takes the identical decision everywhere. What step() still needs from
// the other ranks is the loss, for reporting (reduceLoss).
//
// checkAgreement() is the belt-and-braces debug check (a runtime flag, off by
// default): it compares the step's skip flag, norm and clip coefficient
// across ranks over the host control plane and aborts the job on any
// difference, naming what diverged. It costs one small host all-reduce per
// step and, on the GPU, the host sync reading StepStats already implies.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_AMPSYNC_H
#define AMPC_RUNTIME_COMM_AMPSYNC_H

#include "runtime/comm/Communicator.h"
#include "runtime/Model.h"

#include <cstdint>

namespace ampc::rt {

// Sums Model::lossAccumulator() (one FP32 in the backend's memory) over the
// ranks, in place, so step() reports the global mean (it divides by
// accum * world, like the gradients).
void reduceLoss(Communicator &comm, float *lossAccumulator);

// The global overflow flag: 1 when any rank's |localFoundInf| is non-zero.
int32_t globalFoundInf(Communicator &comm, int32_t localFoundInf);

// Aborts the job (on every rank) unless every rank's |stats| has the same
// skipped flag, gradNorm and clipCoef bit for bit.
void checkAgreement(Communicator &comm, const StepStats &stats);

} // namespace ampc::rt

#endif
