//===- Norm.h - Which layer/RMS norm kernels run ----------------*- C++ -*-===//
//
// The fused kernels (one warp per row: the forward in one launch, the
// backward in two) are the default for rows of up to kFusedNormMaxD
// elements; the previous ones (a block per row, the backward in four
// launches: statistics, dx, two column-sum kernels) stay selectable so a
// GPU run can compare them: AMPC_CUDA_NORM=rows (read once; "fused" or
// unset: the default). Wider rows always take the previous kernels.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_NORM_H
#define AMPC_RUNTIME_CUDA_NORM_H

#include <cstdint>

namespace ampc::cuda {

enum class NormKernels { Fused, Rows };

// 32 lanes x 4 groups x 8 elements: what one warp holds in registers.
inline constexpr int64_t kFusedNormMaxD = 1024;

// The kernels in use: the test override, else AMPC_CUDA_NORM.
NormKernels normKernels();

// Tests: use |k| from now on, whatever AMPC_CUDA_NORM says;
// resetNormKernels gives the choice back to the environment.
void setNormKernels(NormKernels k);
void resetNormKernels();

} // namespace ampc::cuda

#endif
