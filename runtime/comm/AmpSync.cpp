//===- AmpSync.cpp - One loss-scaling decision for all ranks --------------===//

#include "runtime/comm/AmpSync.h"

#include <bit>
#include <cstdio>

namespace ampc::rt {

void reduceLoss(Communicator &comm, float *lossAccumulator) {
  comm.allreduceSum(lossAccumulator, 1);
}

int32_t globalFoundInf(Communicator &comm, int32_t localFoundInf) {
  int32_t flag = localFoundInf != 0;
  comm.hostAllreduce(&flag, 1, CommType::I32, ReduceOp::Max);
  return flag;
}

void checkAgreement(Communicator &comm, const StepStats &stats) {
  // Max and min of each value in one reduction: max(x) and max(-x), in
  // int64 so negation cannot overflow. Floats compare by bit pattern.
  int32_t v[3] = {stats.skipped, std::bit_cast<int32_t>(stats.gradNorm),
                  std::bit_cast<int32_t>(stats.clipCoef)};
  int64_t mm[6];
  for (int i = 0; i < 3; ++i) {
    mm[i] = v[i];
    mm[3 + i] = -int64_t(v[i]);
  }
  comm.hostAllreduce(mm, 6, CommType::I64, ReduceOp::Max);
  const char *names[3] = {"the skip decision (found_inf)", "the gradient norm",
                          "the clip coefficient"};
  for (int i = 0; i < 3; ++i)
    if (mm[i] != -mm[3 + i]) {
      char buf[200];
      std::snprintf(buf, sizeof(buf),
                    "ranks disagree on %s (this rank: skipped=%d grad_norm=%.9g clip=%.9g); "
                    "the gradient all-reduce did not give identical results",
                    names[i], stats.skipped, double(stats.gradNorm), double(stats.clipCoef));
      comm.abort(buf);
    }
}

} // namespace ampc::rt
