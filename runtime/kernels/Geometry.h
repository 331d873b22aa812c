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
// convShape and the rest of the checks of conv2d and its backward ops:
// positive stride and dilation, non-negative padding, the result's spatial
// size, and the optional bias [O].
ConvShape convGeometry(std::string_view op, const TensorRef &x,
                       const TensorRef &w, const TensorRef &y,
                       const Attrs &attrs, const TensorRef *bias = nullptr);

// max_pool2d/avg_pool2d: |x| [N,C,H,W] -> |y| [N,C,OH,OW]; stride defaults
// to kernel_size, padding to 0.
struct PoolWindow {
  int64_t kh, kw, sh, sw, ph, pw;
};
PoolWindow poolWindow(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs);
// poolWindow and the result's spatial size; with |dx| (max_pool2d_backward),
// also that dx has x's size. Plain data: passed to CUDA kernels by value.
struct PoolGeometry {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};
PoolGeometry poolGeometry(std::string_view op, const TensorRef &x,
                          const TensorRef &y, const Attrs &attrs,
                          const TensorRef *dx = nullptr);

// scaled_dot_product_attention: q [.., Hq, T, D], k [.., Hkv, S, D],
// v [.., Hkv, S, E]; scale defaults to 1/sqrt(D). Grouped-query attention
// (Hq = group * Hkv) is one GEMM problem per kv head: the |group| query
// heads it serves are consecutive in q, so they form one [group*T, D]
// matrix. |batch| counts kv heads, |t| = group * tq rows per kv head, and
// row r is query r % tq (what causal masking and the mask index by).
struct AttnGeom {
  int64_t batch, t, s, d, e;
  float scale;
  bool causal;
  int64_t tq = 0, group = 1;
};
AttnGeom attentionGeometry(std::string_view op, const TensorRef &q,
                           const TensorRef &k, const TensorRef &v,
                           const Attrs &attrs);
// The optional attention mask (rank-4 q [B, Hq, T, D]) broadcast to
// [B, Hq, T, S]: element offset of (query head h in [0, B*Hq), query i,
// key j) = (h / hq) * sb + (h % hq) * sh + i * st + j * ss. An integer mask
// keeps the keys where it is nonzero; a float mask is added to the scores.
// Plain data, passed to CUDA kernels by value.
struct AttnMask {
  int64_t hq = 1, sb = 0, sh = 0, st = 0, ss = 0;
  bool additive = false;
  int64_t offset(int64_t h, int64_t i, int64_t j) const {
    return (h / hq) * sb + (h % hq) * sh + i * st + j * ss;
  }
};
AttnMask attentionMask(std::string_view op, const TensorRef &q,
                       const TensorRef &k, const TensorRef &mask);
// attentionGeometry and the result o [.., T, E].
AttnGeom attentionForward(std::string_view op, const TensorRef &q,
                          const TensorRef &k, const TensorRef &v,
                          const TensorRef &o, const Attrs &attrs);
// attentionGeometry, g [.., T, E] and the optional dq, dk, dv (q's, k's and
// v's sizes).
AttnGeom attentionBackward(std::string_view op, const TensorRef &q,
                           const TensorRef &k, const TensorRef &v,
                           const TensorRef &g, const TensorRef *dq,
                           const TensorRef *dk, const TensorRef *dv,
                           const Attrs &attrs);

// matmul [M, K] x [K, N] -> [M, N]; batch_matmul the same over equal
// leading (batch) dimensions, batch = their product. |ta| / |tb| (the
// lhs_transposed / rhs_transposed attributes): a is stored [K, M], b
// [N, K].
struct MatmulShape {
  int64_t batch, m, k, n;
};
MatmulShape matmulShape(std::string_view op, const TensorRef &a,
                        const TensorRef &b, const TensorRef &c,
                        bool ta = false, bool tb = false);
MatmulShape batchMatmulShape(std::string_view op, const TensorRef &a,
                             const TensorRef &b, const TensorRef &c,
                             bool ta = false, bool tb = false);
// linear: x [..., K], weight [N, K], optional bias [N] -> y with M*N
// elements, M the product of x's leading dimensions (batch = 1).
MatmulShape linearShape(std::string_view op, const TensorRef &x,
                        const TensorRef &w, const TensorRef *bias,
                        const TensorRef &y);

// Rows of the last dimension D (norms): returns the row count and sets |d|;
// checks the optional [D] parameters.
int64_t lastDimRows(std::string_view op, const TensorRef &x, int64_t &d,
                    std::initializer_list<const TensorRef *> params);
// lastDimRows for layer_norm / rms_norm, whose result |y| has x's size.
int64_t normRows(std::string_view op, const TensorRef &x, const TensorRef &y,
                 int64_t &d, std::initializer_list<const TensorRef *> params);
// layer_norm_backward / rms_norm_backward (db null): lastDimRows over the
// weight and the optional dweight, dbias, and g and the optional dx with x's
// size.
int64_t normBackwardRows(std::string_view op, const TensorRef &x,
                         const TensorRef &w, const TensorRef &g,
                         const TensorRef *dx, const TensorRef *dw,
                         const TensorRef *db, int64_t &d);

// softmax / log_softmax x -> y along the required `axis`: x = [outer, n,
// inner]; y has x's size.
struct AxisSplit {
  int64_t outer, n, inner;
};
AxisSplit softmaxGeometry(std::string_view op, const TensorRef &x,
                          const TensorRef &y, const Attrs &attrs);

// reduce_sum/mean/max x -> y over `axes` (empty: all): which dimensions are
// reduced and the elements per output; y has the kept dimensions' size.
// With |dx| (reduce_max_backward, y being g), first checks that dx has x's
// size.
struct ReduceAxes {
  bool reduced[kMaxRank];
  int64_t count;
};
ReduceAxes reduceAxes(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs,
                      const TensorRef *dx = nullptr);

// cross_entropy logits [..., C], labels [...] (i32/i64) with ignore_index
// (-100) and label_smoothing (0). The Forward form checks the scalar
// result y; the Backward form the scalar g and dlogits with the logits'
// size. Label values are not checked here (they may be on the device).
struct CrossEntropyShape {
  int64_t rows, classes, ignore;
  double smoothing;
};
CrossEntropyShape crossEntropyForward(std::string_view op,
                                      const TensorRef &logits,
                                      const TensorRef &labels,
                                      const TensorRef &y, const Attrs &attrs);
CrossEntropyShape crossEntropyBackward(std::string_view op,
                                       const TensorRef &logits,
                                       const TensorRef &labels,
                                       const TensorRef &g, const TensorRef &dx,
                                       const Attrs &attrs);
// mse_loss a, b -> scalar y: returns the element count.
int64_t mseLossCount(std::string_view op, const TensorRef &a,
                     const TensorRef &b, const TensorRef &y);

// l1_loss / smooth_l1_loss / huber_loss a, b -> y (a scalar, or like a for
// reduction "none"): the element count and the reduction.
enum class Reduction { Mean, Sum, None };
struct RegressionShape {
  int64_t n;
  Reduction reduction;
};
RegressionShape regressionLossShape(std::string_view op, const TensorRef &a,
                                    const TensorRef &b, const TensorRef &y,
                                    const Attrs &attrs);

// embedding ids [...], table [V, D] -> y [..., D]; embedding_backward ids,
// g [..., D] -> dtable [V, D]; an optional init (a tied table's other
// gradient) needs an f32 dtable of its element count. Id values are not
// checked here.
struct EmbeddingShape {
  int64_t v, d;
};
EmbeddingShape embeddingShape(std::string_view op, const TensorRef &ids,
                              const TensorRef &table, const TensorRef &y);
EmbeddingShape embeddingBackwardShape(std::string_view op,
                                      const TensorRef &ids, const TensorRef &g,
                                      const TensorRef &dtable,
                                      const TensorRef *init = nullptr);

// graph.slice / slice_backward: starts and strides of |x| (the sliced
// operand) after checking limits, ranges and |y|'s shape. Without these
// checks a bad slice reads or writes out of bounds (on the device too).
// With the optional `perm`, y's dimension i is the slice's dimension
// perm[i] (identity when absent).
struct SliceSpec {
  std::vector<int64_t> starts, steps, perm;
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

// graph.concat ins -> y along `axis`, each input first transposed by the
// optional `perm` (as graph.transpose: dimension i of the transposed input
// is the input's dimension perm[i]): one copy per input, into its slab of
// y, in input order. Checks one element type and rank, perm, equal
// transposed shapes off the axis and the axis sizes summing to y's, for
// every input before any copy is made.
std::vector<StridedCopy> concatCopies(std::string_view op,
                                      std::span<const TensorRef> ins,
                                      const TensorRef &y, const Attrs &attrs);

} // namespace ampc::kernels::detail

#endif
