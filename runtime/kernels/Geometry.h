//===- Geometry.h - Host-side operand checks and op geometry ----*- C++ -*-===//
//
// Attribute reading (with the GraphOps.td defaults) and shape resolution and
// validation, with their error messages, shared by the CPU kernel library and
// the CUDA kernel library (which includes this header from nvcc-compiled
// files: keep it to plain host C++ and plain-data structs). Each library
// adds its own accessors and library-specific checks on top; both reach
// these names through their own detail namespace (runtime/cpu/Common.h,
// runtime/cuda/Common.h).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_GEOMETRY_H
#define AMPC_RUNTIME_KERNELS_GEOMETRY_H

#include "runtime/kernels/Abi.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ampc::kernels::detail {

// Throws std::invalid_argument("<op>: <msg>").
[[noreturn]] void fail(std::string_view op, const std::string &msg);

// Operand |i|, or nullptr when absent (past the end or null data).
inline const TensorRef *optional(std::span<const TensorRef> refs, size_t i) {
  return i < refs.size() && refs[i].data ? &refs[i] : nullptr;
}
// Operand |i|; fails when absent.
const TensorRef &required(std::string_view op, std::span<const TensorRef> refs,
                          size_t i);

// Normalizes a possibly negative axis; fails when out of range.
int64_t normAxis(std::string_view op, int64_t axis, int rank);

// Row-major strides of |t| (elements).
void strides(const TensorRef &t, int64_t *s);

// Strides of |src| viewed as broadcast (numpy rules) to |dst|'s shape: 0 on
// broadcast dimensions. Fails when the shapes do not broadcast.
void broadcastStrides(std::string_view op, const TensorRef &src,
                      const TensorRef &dst, int64_t *s);

// conv2d: |x| [N,C,H,W], |w| [O,C/g,KH,KW], |y| [N,O,OH,OW], with the
// stride/padding/dilation/groups attributes. Plain data: the CUDA library
// passes it (with accessors added) to kernels by value.
struct ConvShape {
  int64_t n, c, h, w;   // input
  int64_t o, kh, kw;    // weight [O, C/groups, KH, KW]
  int64_t oh, ow;       // result
  int64_t sh, sw, ph, pw, dh, dw, groups, cg, og;
};
// Reads the attributes and checks ranks, groups and channel counts (not the
// result's spatial size).
ConvShape convShape(std::string_view op, const TensorRef &x,
                    const TensorRef &w, const TensorRef &y,
                    const Attrs &attrs);

// max_pool2d/avg_pool2d: |x| [N,C,H,W] -> |y| [N,C,OH,OW]; stride defaults
// to kernel_size, padding to 0.
struct PoolWindow {
  int64_t kh, kw, sh, sw, ph, pw;
};
PoolWindow poolWindow(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs);

// scaled_dot_product_attention: q [.., T, D], k [.., S, D], v [.., S, E];
// scale defaults to 1/sqrt(D).
struct AttnGeom {
  int64_t batch, t, s, d, e;
  float scale;
  bool causal;
};
AttnGeom attentionGeometry(std::string_view op, const TensorRef &q,
                           const TensorRef &k, const TensorRef &v,
                           const Attrs &attrs);

// matmul [M, K] x [K, N] -> [M, N]; batch_matmul the same over equal
// leading (batch) dimensions, batch = their product.
struct MatmulShape {
  int64_t batch, m, k, n;
};
MatmulShape matmulShape(std::string_view op, const TensorRef &a,
                        const TensorRef &b, const TensorRef &c);
MatmulShape batchMatmulShape(std::string_view op, const TensorRef &a,
                             const TensorRef &b, const TensorRef &c);
// linear: x [..., K], weight [N, K], optional bias [N] -> y with M*N
// elements, M the product of x's leading dimensions (batch = 1).
MatmulShape linearShape(std::string_view op, const TensorRef &x,
                        const TensorRef &w, const TensorRef *bias,
                        const TensorRef &y);

// Rows of the last dimension D (norms): returns the row count and sets |d|;
// checks the optional [D] parameters.
int64_t lastDimRows(std::string_view op, const TensorRef &x, int64_t &d,
                    std::initializer_list<const TensorRef *> params);

// graph.slice / slice_backward: starts and strides of |x| (the sliced
// operand) after checking limits, ranges and |y|'s shape. Without these
// checks a bad slice reads or writes out of bounds (on the device too).
struct SliceSpec {
  std::vector<int64_t> starts, steps;
};
SliceSpec sliceSpec(std::string_view op, const TensorRef &x,
                    const TensorRef &y, const Attrs &attrs);

// Data movement (graph.transpose, slice, slice_backward, broadcast_to): the
// box |dims| copied element by element from src[srcBase + sum i_d * src_d]
// to dst[dstBase + sum i_d * dst_d] (strides and offsets in elements).
// Each function checks the op's operands first, including that they have
// one element type ("element types differ").
struct StridedCopy {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src[kMaxRank] = {}, dst[kMaxRank] = {};
  int64_t srcBase = 0, dstBase = 0;
};
// Fails unless |a| and |b| have one element type.
void sameElementType(std::string_view op, const TensorRef &a,
                     const TensorRef &b);
// graph.reshape x -> y: one element type and count.
void reshapeCheck(std::string_view op, const TensorRef &x, const TensorRef &y);
// graph.transpose x -> y: result dimension i is x's dimension perm[i].
StridedCopy transposeCopy(std::string_view op, const TensorRef &x,
                          const TensorRef &y, const Attrs &attrs);
// graph.slice x -> y (sliceSpec's checks).
StridedCopy sliceCopy(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs);
// graph.slice_backward g -> dx: g into the slice of dx (the caller zeroes
// the rest of dx).
StridedCopy sliceBackwardCopy(std::string_view op, const TensorRef &g,
                              const TensorRef &dx, const Attrs &attrs);
// graph.broadcast_to x -> y (broadcastStrides' checks).
StridedCopy broadcastCopy(std::string_view op, const TensorRef &x,
                          const TensorRef &y);

// graph.concat ins -> y along `axis`: one element type and rank, equal
// shapes off the axis, the axis sizes summing to y's. y = [outer, axis,
// inner] with the axis normalized.
struct ConcatGeometry {
  int axis;
  int64_t outer, inner;
};
ConcatGeometry concatGeometry(std::string_view op,
                              std::span<const TensorRef> ins,
                              const TensorRef &y, const Attrs &attrs);

} // namespace ampc::kernels::detail

#endif
