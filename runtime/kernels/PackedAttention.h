//===- PackedAttention.h - packed_attention's geometry and views -*- C++ -*-===//
//
// graph.packed_attention reads q, k, v as the thirds of one qkv
// [B, T, 3, H, D] and writes o [B, T, H, D]; its backward reads g [B, T, H,
// D] and writes d(qkv) [B, T, 3, H, D]. Both libraries run it on their
// attention code, either on strided views (cuDNN) or, on the copy path, on
// [B, H, T, D] temporaries made by their own transpose kernels with the
// permutations below: one transpose gathers q, k and v together, one
// scatters dq, dk and dv together. Copies are exact, so the copy path is
// bitwise the unfused graph (slices, transposes, attention, concat).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_PACKEDATTENTION_H
#define AMPC_RUNTIME_KERNELS_PACKEDATTENTION_H

#include "runtime/kernels/Abi.h"
#include "runtime/kernels/Geometry.h"

#include <cmath>
#include <string>

namespace ampc::kernels::detail {

struct PackedAttn {
  int64_t b, t, h, d;
  float scale;
  bool causal;
  int64_t e() const { return h * d; }
  // Elements of one of q, k, v, o.
  int64_t part() const { return b * t * h * d; }
  // qkv [B, T, 3E] as [B, T, 3, H, D]; the result and g as [B, T, H, D].
  TensorRef packed(void *data, DType t5) const {
    return makeRef(data, t5, {b, t, 3, h, d});
  }
  TensorRef rows(void *data, DType t4) const {
    return makeRef(data, t4, {b, t, h, d});
  }
  // q, k, v (or dq, dk, dv) contiguous one after the other: [3, B, H, T, D].
  TensorRef heads3(void *data, DType t5) const {
    return makeRef(data, t5, {3, b, h, t, d});
  }
  // One [B, H, T, D] tensor of |base| (|i|-th of heads3's three).
  TensorRef heads(void *base, int i, DType dt) const {
    return makeRef(static_cast<char *>(base) + size_t(i * part()) *
                                                   dtypeSize(dt),
                   dt, {b, h, t, d});
  }
};

// [B, T, 3, H, D] -> [3, B, H, T, D] (gather q, k, v) and back.
inline std::vector<int64_t> gatherPerm() { return {2, 0, 3, 1, 4}; }
inline std::vector<int64_t> scatterPerm() { return {1, 3, 0, 2, 4}; }
// [B, H, T, D] <-> [B, T, H, D].
inline std::vector<int64_t> headSwap() { return {0, 2, 1, 3}; }

// qkv [B, T, 3E] (|heads| = H, E = H * D) and |other| ([B, T, E]: o or g),
// with the scale (default 1/sqrt(D)) and causal flag of |attrs|.
inline PackedAttn packedAttention(std::string_view op, const TensorRef &qkv,
                                  const TensorRef &other, const Attrs &attrs) {
  int64_t h = attrs.getInt("heads");
  if (qkv.rank != 3 || h < 1 || qkv.shape[2] % (3 * h) != 0)
    fail(op, "qkv must be [B, T, 3 * heads * D]");
  PackedAttn g{qkv.shape[0], qkv.shape[1], h, qkv.shape[2] / (3 * h), 0.0f,
               attrs.getBool("causal")};
  if (other.numel() != g.part())
    fail(op, "the result (and g) must be [B, T, heads * D]");
  g.scale = float(attrs.getFloat("scale", 1.0 / std::sqrt(double(g.d))));
  return g;
}

} // namespace ampc::kernels::detail

#endif
