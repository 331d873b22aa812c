//===- Geometry.cpp - Host-side operand checks and op geometry ------------===//
#include "runtime/kernels/Geometry.h"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ampc::kernels::detail {

void fail(std::string_view op, const std::string &msg) {
  throw std::invalid_argument(std::string(op) + ": " + msg);
}

const TensorRef &required(std::string_view op, std::span<const TensorRef> refs,
                          size_t i) {
  if (i >= refs.size() || !refs[i].data)
    fail(op, "missing operand or result #" + std::to_string(i));
  return refs[i];
}

int64_t normAxis(std::string_view op, int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail(op, "axis " + std::to_string(axis) + " out of range for rank " +
                 std::to_string(rank));
  return a;
}

void strides(const TensorRef &t, int64_t *s) {
  int64_t acc = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    s[d] = acc;
    acc *= t.shape[d];
  }
}

void broadcastStrides(std::string_view op, const TensorRef &src,
                      const TensorRef &dst, int64_t *s) {
  if (src.rank > dst.rank)
    fail(op, "operand rank exceeds the result rank");
  int64_t own[kMaxRank];
  strides(src, own);
  int off = dst.rank - src.rank;
  for (int d = 0; d < dst.rank; ++d) {
    if (d < off) {
      s[d] = 0;
      continue;
    }
    int64_t n = src.shape[d - off];
    if (n == dst.shape[d])
      s[d] = n == 1 ? 0 : own[d - off];
    else if (n == 1)
      s[d] = 0;
    else
      fail(op, "shapes do not broadcast");
  }
}

namespace {

// The optional `perm` of slice, slice_backward and concat (identity when
// absent); fails unless it permutes |rank| axes.
std::vector<int64_t> permOf(std::string_view op, const Attrs &attrs,
                            int rank) {
  std::vector<int64_t> perm = attrs.getInts("perm", {});
  if (perm.empty())
    for (int d = 0; d < rank; ++d)
      perm.push_back(d);
  bool used[kMaxRank] = {};
  if (int(perm.size()) != rank)
    fail(op, "perm must have one entry per dimension");
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || used[p])
      fail(op, "perm is not a permutation");
    used[p] = true;
  }
  return perm;
}

std::vector<int64_t> pair(std::string_view op, const Attrs &attrs,
                          std::string_view name, int64_t dflt) {
  std::vector<int64_t> v = attrs.getInts(name, {dflt, dflt});
  if (v.size() != 2)
    fail(op, std::string(name) + " must have two entries");
  return v;
}

} // namespace

ConvShape convShape(std::string_view op, const TensorRef &x,
                    const TensorRef &w, const TensorRef &y,
                    const Attrs &attrs) {
  if (x.rank != 4 || w.rank != 4 || y.rank != 4)
    fail(op, "expected rank-4 NCHW tensors");
  auto s = pair(op, attrs, "stride", 1), p = pair(op, attrs, "padding", 0),
       d = pair(op, attrs, "dilation", 1);
  ConvShape g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0],
              w.shape[2], w.shape[3], y.shape[2], y.shape[3], s[0], s[1], p[0],
              p[1], d[0], d[1], attrs.getInt("groups", 1), 0, 0};
  if (g.groups < 1 || g.c % g.groups || g.o % g.groups)
    fail(op, "groups must divide the channel counts");
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  if (w.shape[1] != g.cg || y.shape[0] != g.n || y.shape[1] != g.o)
    fail(op, "weight or result channels mismatch");
  return g;
}

PoolWindow poolWindow(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs) {
  if (x.rank != 4 || y.rank != 4 || x.shape[0] != y.shape[0] ||
      x.shape[1] != y.shape[1])
    fail(op, "expected [N,C,H,W] -> [N,C,OH,OW]");
  auto k = attrs.getInts("kernel_size");
  auto s = attrs.getInts("stride", k);
  auto p = attrs.getInts("padding", {0, 0});
  if (k.size() != 2 || s.size() != 2 || p.size() != 2)
    fail(op, "kernel_size, stride and padding are [h, w]");
  return {k[0], k[1], s[0], s[1], p[0], p[1]};
}

AttnGeom attentionGeometry(std::string_view op, const TensorRef &q,
                           const TensorRef &k, const TensorRef &v,
                           const Attrs &attrs) {
  int r = q.rank;
  if (r < 2 || k.rank != r || v.rank != r)
    fail(op, "q, k and v must have equal rank >= 2");
  AttnGeom g{1, q.shape[r - 2], k.shape[r - 2], q.shape[r - 1],
             v.shape[r - 1], 0.0f, attrs.getBool("causal")};
  g.tq = g.t;
  for (int i = 0; i < r - 2; ++i) {
    if (v.shape[i] != k.shape[i])
      fail(op, "batch/head dimensions differ");
    if (k.shape[i] != q.shape[i]) {
      // Grouped-query attention: only the heads (the last batch dimension).
      if (i != r - 3 || k.shape[i] <= 0 || q.shape[i] % k.shape[i] != 0)
        fail(op, "batch/head dimensions differ");
      g.group = q.shape[i] / k.shape[i];
    }
    g.batch *= k.shape[i];
  }
  g.t = g.group * g.tq;
  if (k.shape[r - 1] != g.d || v.shape[r - 2] != g.s)
    fail(op, "expected q [.., T, D], k [.., S, D], v [.., S, E]");
  g.scale = float(attrs.getFloat("scale", 1.0 / std::sqrt(double(g.d))));
  return g;
}

AttnMask attentionMask(std::string_view op, const TensorRef &q,
                       const TensorRef &k, const TensorRef &mask) {
  if (q.rank != 4 || k.rank != 4)
    fail(op, "a mask needs q [B, H, T, D] and k [B, H, S, D]");
  TensorRef full{};
  full.rank = 4;
  full.shape[0] = q.shape[0], full.shape[1] = q.shape[1];
  full.shape[2] = q.shape[2], full.shape[3] = k.shape[2];
  int64_t s[kMaxRank];
  broadcastStrides(op, mask, full, s);
  AttnMask m{q.shape[1], s[0], s[1], s[2], s[3]};
  m.additive = mask.dtype == DType::F32 || mask.dtype == DType::F16 ||
               mask.dtype == DType::BF16;
  if (m.additive && mask.dtype != q.dtype)
    fail(op, "a float mask must have q's element type");
  return m;
}

MatmulShape matmulShape(std::string_view op, const TensorRef &a,
                        const TensorRef &b, const TensorRef &c, bool ta,
                        bool tb) {
  if (a.rank != 2 || b.rank != 2 || c.rank != 2)
    fail(op, "expected [M, K] x [K, N] -> [M, N]");
  int64_t m = a.shape[ta ? 1 : 0], k = a.shape[ta ? 0 : 1];
  int64_t kb = b.shape[tb ? 1 : 0], n = b.shape[tb ? 0 : 1];
  if (k != kb || c.shape[0] != m || c.shape[1] != n)
    fail(op, "expected [M, K] x [K, N] -> [M, N]");
  return {1, m, k, n};
}

MatmulShape batchMatmulShape(std::string_view op, const TensorRef &a,
                             const TensorRef &b, const TensorRef &c, bool ta,
                             bool tb) {
  int r = a.rank;
  if (r < 3 || b.rank != r || c.rank != r)
    fail(op, "expected operands of equal rank >= 3");
  int64_t batch = 1;
  for (int d = 0; d < r - 2; ++d) {
    if (a.shape[d] != b.shape[d] || a.shape[d] != c.shape[d])
      fail(op, "batch dimensions differ");
    batch *= a.shape[d];
  }
  int64_t m = a.shape[ta ? r - 1 : r - 2], k = a.shape[ta ? r - 2 : r - 1];
  int64_t kb = b.shape[tb ? r - 1 : r - 2], n = b.shape[tb ? r - 2 : r - 1];
  if (kb != k || c.shape[r - 2] != m || c.shape[r - 1] != n)
    fail(op, "expected [..., M, K] x [..., K, N] -> [..., M, N]");
  return {batch, m, k, n};
}

MatmulShape linearShape(std::string_view op, const TensorRef &x,
                        const TensorRef &w, const TensorRef *bias,
                        const TensorRef &y) {
  if (x.rank < 1 || w.rank != 2 || x.shape[x.rank - 1] != w.shape[1])
    fail(op, "expected x [..., K] and weight [N, K]");
  int64_t k = w.shape[1], n = w.shape[0], m = x.numel() / (k ? k : 1);
  if (y.numel() != m * n || (bias && bias->numel() != n))
    fail(op, "result or bias shape mismatch");
  return {1, m, k, n};
}

int64_t lastDimRows(std::string_view op, const TensorRef &x, int64_t &d,
                    std::initializer_list<const TensorRef *> params) {
  if (x.rank < 1)
    fail(op, "expected rank >= 1");
  d = x.shape[x.rank - 1];
  for (const TensorRef *p : params)
    if (p && p->numel() != d)
      fail(op, "weight/bias must be [D]");
  return d ? x.numel() / d : 0;
}

int64_t normRows(std::string_view op, const TensorRef &x, const TensorRef &y,
                 int64_t &d, std::initializer_list<const TensorRef *> params) {
  int64_t m = lastDimRows(op, x, d, params);
  if (y.numel() != x.numel())
    fail(op, "the result needs x's size");
  return m;
}

// Reads starts/limits/strides for |x| and checks |y|'s shape against them.
SliceSpec sliceSpec(std::string_view op, const TensorRef &x,
                    const TensorRef &y, const Attrs &attrs) {
  SliceSpec s{attrs.getInts("starts"), {}};
  auto limits = attrs.getInts("limits");
  s.steps = attrs.getInts("strides", std::vector<int64_t>(size_t(x.rank), 1));
  if (int(s.starts.size()) != x.rank || int(limits.size()) != x.rank ||
      int(s.steps.size()) != x.rank || y.rank != x.rank)
    fail(op, "starts/limits/strides must have one entry per dimension");
  s.perm = permOf(op, attrs, x.rank);
  for (int i = 0; i < x.rank; ++i) {
    int64_t d = s.perm[i], st = s.steps[d];
    if (st < 1 || s.starts[d] < 0 || limits[d] > x.shape[d])
      fail(op, "slice out of range");
    int64_t n = limits[d] > s.starts[d] ? (limits[d] - s.starts[d] + st - 1) / st : 0;
    if (n != y.shape[i])
      fail(op, "result shape does not match the slice");
  }
  return s;
}

void sameElementType(std::string_view op, const TensorRef &a,
                     const TensorRef &b) {
  if (a.dtype != b.dtype)
    fail(op, "element types differ");
}

void reshapeCheck(std::string_view op, const TensorRef &x, const TensorRef &y) {
  sameElementType(op, x, y);
  if (x.numel() != y.numel())
    fail(op, "element counts differ");
}

namespace {

// The copy of |box|'s whole shape, destination strides row-major.
StridedCopy copyOver(const TensorRef &box) {
  StridedCopy c;
  c.rank = box.rank;
  for (int d = 0; d < box.rank; ++d)
    c.dims[d] = box.shape[d];
  strides(box, c.dst);
  return c;
}

} // namespace

StridedCopy transposeCopy(std::string_view op, const TensorRef &x,
                          const TensorRef &y, const Attrs &attrs) {
  sameElementType(op, x, y);
  auto perm = attrs.getInts("perm");
  if (int(perm.size()) != x.rank || y.rank != x.rank)
    fail(op, "perm must have one entry per dimension");
  permOf(op, attrs, x.rank); // fails unless each axis appears once
  StridedCopy c = copyOver(y);
  int64_t xs[kMaxRank];
  strides(x, xs);
  for (int i = 0; i < x.rank; ++i) {
    if (y.shape[i] != x.shape[perm[i]]) // perm in range: permOf above
      fail(op, "perm does not match the shapes");
    c.src[i] = xs[perm[i]];
  }
  return c;
}

StridedCopy sliceCopy(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs) {
  sameElementType(op, x, y);
  SliceSpec s = sliceSpec(op, x, y, attrs);
  StridedCopy c = copyOver(y);
  int64_t xs[kMaxRank];
  strides(x, xs);
  for (int d = 0; d < x.rank; ++d)
    c.srcBase += s.starts[d] * xs[d];
  // Result dimension i walks slice dimension perm[i].
  for (int i = 0; i < x.rank; ++i)
    c.src[i] = xs[s.perm[i]] * s.steps[s.perm[i]];
  return c;
}

// The slice's copy the other way round: g read whole, written strided
// into dx.
StridedCopy sliceBackwardCopy(std::string_view op, const TensorRef &g,
                              const TensorRef &dx, const Attrs &attrs) {
  StridedCopy c = sliceCopy(op, dx, g, attrs);
  std::swap(c.src, c.dst);
  std::swap(c.srcBase, c.dstBase);
  return c;
}

StridedCopy broadcastCopy(std::string_view op, const TensorRef &x,
                          const TensorRef &y) {
  sameElementType(op, x, y);
  StridedCopy c = copyOver(y);
  broadcastStrides(op, x, y, c.src);
  return c;
}

std::vector<StridedCopy> concatCopies(std::string_view op,
                                      std::span<const TensorRef> ins,
                                      const TensorRef &y, const Attrs &attrs) {
  int axis = int(normAxis(op, attrs.getInt("axis"), y.rank));
  std::vector<int64_t> perm = permOf(op, attrs, y.rank);
  int64_t ys[kMaxRank], total = 0;
  strides(y, ys);
  std::vector<StridedCopy> copies;
  for (const TensorRef &x : ins) {
    sameElementType(op, x, y);
    if (x.rank != y.rank)
      fail(op, "operand ranks differ");
    int64_t xs[kMaxRank];
    strides(x, xs);
    // The box is the transposed input; y's dimension i walks x's perm[i].
    StridedCopy c;
    c.rank = y.rank;
    for (int i = 0; i < y.rank; ++i) {
      c.dims[i] = x.shape[perm[i]];
      c.src[i] = xs[perm[i]];
      c.dst[i] = ys[i];
      if (i != axis && c.dims[i] != y.shape[i])
        fail(op, "operand shapes differ off the axis");
    }
    c.dstBase = total * ys[axis];
    total += c.dims[axis];
    copies.push_back(c);
  }
  if (total != y.shape[axis])
    fail(op, "result size along the axis is not the sum");
  return copies;
}

ConvShape convGeometry(std::string_view op, const TensorRef &x,
                       const TensorRef &w, const TensorRef &y,
                       const Attrs &attrs, const TensorRef *bias) {
  ConvShape g = convShape(op, x, w, y, attrs);
  if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 || g.ph < 0 || g.pw < 0)
    fail(op, "stride and dilation must be positive, padding non-negative");
  int64_t eh = (g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  int64_t ew = (g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  if (eh != g.oh || ew != g.ow)
    fail(op, "result spatial size does not match stride/padding/dilation");
  if (bias && bias->numel() != g.o)
    fail(op, "bias must be [O]");
  return g;
}

PoolGeometry poolGeometry(std::string_view op, const TensorRef &x,
                          const TensorRef &y, const Attrs &attrs,
                          const TensorRef *dx) {
  PoolWindow k = poolWindow(op, x, y, attrs);
  PoolGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[2],
                 y.shape[3], k.kh,       k.kw,       k.sh,       k.sw,
                 k.ph,       k.pw};
  if ((g.h + 2 * g.ph - g.kh) / g.sh + 1 != g.oh ||
      (g.w + 2 * g.pw - g.kw) / g.sw + 1 != g.ow)
    fail(op, "result spatial size does not match kernel/stride/padding");
  if (dx && dx->numel() != x.numel())
    fail(op, "dx must have the input's shape");
  return g;
}

AttnGeom attentionForward(std::string_view op, const TensorRef &q,
                          const TensorRef &k, const TensorRef &v,
                          const TensorRef &o, const Attrs &attrs) {
  AttnGeom g = attentionGeometry(op, q, k, v, attrs);
  if (o.numel() != g.batch * g.t * g.e)
    fail(op, "result must be [.., T, E]");
  return g;
}

AttnGeom attentionBackward(std::string_view op, const TensorRef &q,
                           const TensorRef &k, const TensorRef &v,
                           const TensorRef &g, const TensorRef *dq,
                           const TensorRef *dk, const TensorRef *dv,
                           const Attrs &attrs) {
  AttnGeom a = attentionGeometry(op, q, k, v, attrs);
  if (g.numel() != a.batch * a.t * a.e || (dq && dq->numel() != q.numel()) ||
      (dk && dk->numel() != k.numel()) || (dv && dv->numel() != v.numel()))
    fail(op, "g must be [.., T, E]; dq, dk, dv the shapes of q, k, v");
  return a;
}

int64_t normBackwardRows(std::string_view op, const TensorRef &x,
                         const TensorRef &w, const TensorRef &g,
                         const TensorRef *dx, const TensorRef *dw,
                         const TensorRef *db, int64_t &d) {
  int64_t m = lastDimRows(op, x, d, {&w, dw, db});
  if (g.numel() != x.numel() || (dx && dx->numel() != x.numel()))
    fail(op, "g and dx must have x's shape");
  return m;
}

AxisSplit softmaxGeometry(std::string_view op, const TensorRef &x,
                          const TensorRef &y, const Attrs &attrs) {
  if (x.numel() != y.numel())
    fail(op, "operand and result sizes differ");
  int axis = int(normAxis(op, attrs.getInt("axis"), x.rank));
  AxisSplit s{1, x.shape[axis], 1};
  for (int d = 0; d < axis; ++d)
    s.outer *= x.shape[d];
  for (int d = axis + 1; d < x.rank; ++d)
    s.inner *= x.shape[d];
  return s;
}

ReduceAxes reduceAxes(std::string_view op, const TensorRef &x,
                      const TensorRef &y, const Attrs &attrs,
                      const TensorRef *dx) {
  if (dx && dx->numel() != x.numel())
    fail(op, "dx must have x's shape");
  auto axes = attrs.getInts("axes", {});
  ReduceAxes r{{}, 1};
  if (axes.empty())
    for (int d = 0; d < x.rank; ++d)
      r.reduced[d] = true;
  for (int64_t a : axes)
    r.reduced[normAxis(op, a, x.rank)] = true;
  int64_t kept = 1;
  for (int d = 0; d < x.rank; ++d)
    (r.reduced[d] ? r.count : kept) *= x.shape[d];
  if (kept != y.numel())
    fail(op, "result size does not match the reduction");
  return r;
}

namespace {

CrossEntropyShape crossEntropyShape(std::string_view op,
                                    const TensorRef &logits,
                                    const TensorRef &labels,
                                    const Attrs &attrs) {
  if (logits.rank < 1)
    fail(op, "logits must be [..., C]");
  CrossEntropyShape p{labels.numel(), logits.shape[logits.rank - 1],
                      attrs.getInt("ignore_index", -100),
                      attrs.getFloat("label_smoothing", 0.0)};
  if (labels.dtype != DType::I32 && labels.dtype != DType::I64)
    fail(op, "ids/labels must be i32 or i64");
  if (p.rows * p.classes != logits.numel())
    fail(op, "labels must have the logits' shape without the class axis");
  return p;
}

} // namespace

CrossEntropyShape crossEntropyForward(std::string_view op,
                                      const TensorRef &logits,
                                      const TensorRef &labels,
                                      const TensorRef &y, const Attrs &attrs) {
  if (y.numel() != 1)
    fail(op, "the result is a scalar");
  return crossEntropyShape(op, logits, labels, attrs);
}

CrossEntropyShape crossEntropyBackward(std::string_view op,
                                       const TensorRef &logits,
                                       const TensorRef &labels,
                                       const TensorRef &g, const TensorRef &dx,
                                       const Attrs &attrs) {
  if (g.numel() != 1 || dx.numel() != logits.numel())
    fail(op, "g is a scalar and dlogits has the logits' shape");
  return crossEntropyShape(op, logits, labels, attrs);
}

int64_t mseLossCount(std::string_view op, const TensorRef &a,
                     const TensorRef &b, const TensorRef &y) {
  if (a.numel() != b.numel() || y.numel() != 1)
    fail(op, "operands must have equal sizes; the result is a scalar");
  return a.numel();
}

RegressionShape regressionLossShape(std::string_view op, const TensorRef &a,
                                    const TensorRef &b, const TensorRef &y,
                                    const Attrs &attrs) {
  std::string reduction = attrs.getString("reduction", "mean");
  Reduction r = reduction == "mean"  ? Reduction::Mean
                : reduction == "sum" ? Reduction::Sum
                                     : Reduction::None;
  if (r == Reduction::None && reduction != "none")
    fail(op, "reduction must be mean, sum or none");
  int64_t n = a.numel();
  if (b.numel() != n || y.numel() != (r == Reduction::None ? n : 1))
    fail(op, "operands must have equal sizes; the result is a scalar unless "
             "reduction is none");
  return {n, r};
}

EmbeddingShape embeddingShape(std::string_view op, const TensorRef &ids,
                              const TensorRef &table, const TensorRef &y) {
  if (table.rank != 2)
    fail(op, "table must be [V, D]");
  EmbeddingShape s{table.shape[0], table.shape[1]};
  if (y.numel() != ids.numel() * s.d)
    fail(op, "result must be [..., D]");
  return s;
}

EmbeddingShape embeddingBackwardShape(std::string_view op,
                                      const TensorRef &ids, const TensorRef &g,
                                      const TensorRef &dtable,
                                      const TensorRef *init) {
  if (dtable.rank != 2)
    fail(op, "dtable must be [V, D]");
  EmbeddingShape s{dtable.shape[0], dtable.shape[1]};
  if (g.numel() != ids.numel() * s.d)
    fail(op, "g must be [..., D]");
  if (init && (dtable.dtype != DType::F32 || init->numel() != dtable.numel()))
    fail(op, "init needs an f32 dtable of its shape");
  return s;
}

} // namespace ampc::kernels::detail
