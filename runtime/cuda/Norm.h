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

// Where the fused backward sums the weight and bias gradients' columns:
// Inline, in normBackwardWarp's registers (a lane holds its columns' sums
// over its rows); Split, in a column pass over x and g with the row
// statistics normBackwardWarp stores (normColumnPartials, then
// columnFinish). Inline costs 2 x 8 x K
// registers a lane: at K = 3 (rows of 513..768, GPT-2's 768) one block of 8
// warps fits an SM, and an H200 ran the backward at a quarter of its
// memory floor (85 us against 22 for 8192 x 768). Auto: Split from K = 3.
// AMPC_CUDA_NORM_SUMS=auto|inline|split (read once).
enum class NormSums { Auto, Inline, Split };
NormSums normSums();
// Tests: as setNormKernels.
void setNormSums(NormSums s);
void resetNormSums();
// Whether rows of |d| elements take the split sums under |s|.
bool normSumsSplit(NormSums s, int64_t d);

} // namespace ampc::cuda

#endif
