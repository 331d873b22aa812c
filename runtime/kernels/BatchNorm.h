//===- BatchNorm.h - batch/group norm geometry, running update ---*- C++ -*-===//
//
// What runtime/cpu and runtime/cuda share of batch_norm and group_norm: the
// operand checks (x [N, C] or [N, C, H, W] / [N, C, *], every per-channel
// vector [C]) and the one formula of the running-statistics update (host
// and device).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_BATCHNORM_H
#define AMPC_RUNTIME_KERNELS_BATCHNORM_H

#include "runtime/kernels/Geometry.h"
#include "runtime/numerics/HostDevice.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace ampc::kernels::detail {

// x viewed as [N, C, S], S = H*W (1 for [N, C]); n = N*S values a channel.
struct BatchNormGeometry {
  int64_t batch, channels, spatial;
  AMPC_HD int64_t count() const { return batch * spatial; }
};

// Checks x's rank and that every present vector is [C] FP32-or-x's float
// type; fails naming |op|.
inline BatchNormGeometry
batchNormGeometry(std::string_view op, const TensorRef &x,
                  std::initializer_list<const TensorRef *> vectors) {
  if (x.rank != 2 && x.rank != 4)
    fail(op, "x must be [N, C] or [N, C, H, W], got rank " +
                 std::to_string(x.rank));
  BatchNormGeometry g{x.shape[0], x.shape[1], x.rank == 4 ? x.shape[2] * x.shape[3] : 1};
  for (const TensorRef *v : vectors)
    if (v && (v->rank != 1 || v->shape[0] != g.channels))
      fail(op, "per-channel operands must be [" + std::to_string(g.channels) +
                   "]");
  return g;
}

// group_norm's x viewed as [N, G, C/G, S]: each (sample, group) is one
// contiguous run of perGroup * spatial elements.
struct GroupNormGeometry {
  int64_t batch, groups, perGroup, spatial;
  AMPC_HD int64_t groupSize() const { return perGroup * spatial; }
};

inline GroupNormGeometry
groupNormGeometry(std::string_view op, const TensorRef &x, int64_t groups,
                  std::initializer_list<const TensorRef *> vectors) {
  if (x.rank < 2)
    fail(op, "x must be [N, C, *], got rank " + std::to_string(x.rank));
  int64_t c = x.shape[1];
  if (groups < 1 || c % groups != 0)
    fail(op, "num_groups " + std::to_string(groups) + " must divide the " +
                 std::to_string(c) + " channels");
  int64_t spatial = 1;
  for (int k = 2; k < x.rank; ++k)
    spatial *= x.shape[k];
  for (const TensorRef *v : vectors)
    if (v && (v->rank != 1 || v->shape[0] != c))
      fail(op, "per-channel operands must be [" + std::to_string(c) + "]");
  return {x.shape[0], groups, c / groups, spatial};
}

} // namespace ampc::kernels::detail

namespace ampc::num {

// torch.nn.BatchNorm's update of a running statistic |r| by the batch's
// |stat| (the mean, or the unbiased variance), in double as PyTorch's CPU
// kernel computes it: momentum * stat + (1 - momentum) * r.
AMPC_HD inline float runningUpdate(float r, float stat, double momentum) {
  return float(momentum * double(stat) + (1.0 - momentum) * double(r));
}

} // namespace ampc::num

#endif
