//===- GraphCollapseDataMovement.cpp - Slice/reshape/transpose as one copy -===//
//
// Attention splits heads out of a fused projection as slice -> reshape ->
// transpose (two strided copies per tensor), and its backward writes
// transpose -> reshape -> slice_backward. When the composition is one
// strided view of the source, it becomes one graph.slice (slice_backward)
// with a `perm` over a reshape of the source (a reshape is an alias): one
// launch, each element read and written once, the same bits.
//
// Then autodiff's sum of the q, k and v cotangents (three slice_backward
// results that tile the fused gradient) becomes one graph.concat with
// `perm`: each element written once, instead of three zero-filled writes
// of the whole tensor and an add that reads them all.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHCOLLAPSEDATAMOVEMENT
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

SmallVector<int64_t> permOrIdentity(std::optional<ArrayRef<int64_t>> perm,
                                    int64_t rank) {
  if (perm)
    return SmallVector<int64_t>(*perm);
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != int64_t(i))
      return false;
  return true;
}

DenseI64ArrayAttr permAttr(OpBuilder &b, ArrayRef<int64_t> perm) {
  return isIdentity(perm) ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(perm);
}

// A slice of |full| (starts, limits, strides per dimension) whose result is
// then reshaped to |to| by splitting each sliced dimension into consecutive
// result dimensions, rewritten as a reshape of the source to |fullOut| and a
// slice of that. Fails (nullopt) unless every slice dimension is one group
// of |to| and each split group of a dimension sliced part-way has stride 1
// and an aligned start: then the view is the same strided view of the
// source.
struct SplitSlice {
  SmallVector<int64_t> fullOut, starts, limits, strides;
};
std::optional<SplitSlice> splitSlice(ArrayRef<int64_t> full,
                                     ArrayRef<int64_t> starts,
                                     ArrayRef<int64_t> limits,
                                     ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> sliced,
                                     ArrayRef<int64_t> to) {
  SplitSlice r;
  size_t j = 0;
  for (size_t d = 0; d < full.size(); ++d) {
    size_t first = j;
    int64_t prod = 1;
    while (prod < sliced[d] && j < to.size())
      prod *= to[j++];
    if (prod != sliced[d] || j == first)
      return std::nullopt; // a merge, or a dimension that disappears
    ArrayRef<int64_t> group = to.slice(first, j - first);
    if (group.size() == 1) {
      r.fullOut.push_back(full[d]);
      r.starts.push_back(starts[d]);
      r.limits.push_back(limits[d]);
      r.strides.push_back(strides[d]);
      continue;
    }
    int64_t inner = prod / group[0];
    if (strides[d] != 1 || starts[d] % inner != 0 || full[d] % inner != 0)
      return std::nullopt;
    r.fullOut.push_back(full[d] / inner);
    r.starts.push_back(starts[d] / inner);
    r.limits.push_back(starts[d] / inner + group[0]);
    r.strides.push_back(1);
    for (int64_t f : group.drop_front()) {
      r.fullOut.push_back(f);
      r.starts.push_back(0);
      r.limits.push_back(f);
      r.strides.push_back(1);
    }
  }
  if (j != to.size())
    return std::nullopt;
  return r;
}

DenseI64ArrayAttr stridesAttr(OpBuilder &b, ArrayRef<int64_t> strides) {
  return llvm::all_of(strides, [](int64_t s) { return s == 1; })
             ? DenseI64ArrayAttr()
             : b.getDenseI64ArrayAttr(strides);
}

// The strides of a graph.slice / slice_backward (1 when absent).
template <typename SliceLike>
SmallVector<int64_t> stridesOf(SliceLike op, size_t rank) {
  if (auto s = op.getStrides())
    return SmallVector<int64_t>(*s);
  return SmallVector<int64_t>(rank, 1);
}

// |op|'s slice of |full| (whose result is |sliced|) seen through a reshape
// of the sliced tensor to |to|, as a slice of |full| reshaped (splitSlice);
// nullopt unless that is a view and |full| changes shape.
template <typename SliceLike>
std::optional<SplitSlice> splitOf(SliceLike op, ArrayRef<int64_t> full,
                                  ArrayRef<int64_t> sliced,
                                  ArrayRef<int64_t> to) {
  auto split = splitSlice(full, op.getStarts(), op.getLimits(),
                          stridesOf(op, full.size()), sliced, to);
  if (!split || ArrayRef<int64_t>(split->fullOut) == full)
    return std::nullopt;
  return split;
}

// A graph.slice / slice_backward of |src| with |split|'s slice, no perm.
template <typename SliceLike>
Value createSplit(PatternRewriter &rw, Location loc, Type type, Value src,
                  const SplitSlice &split) {
  return SliceLike::create(rw, loc, type, src,
                           rw.getDenseI64ArrayAttr(split.starts),
                           rw.getDenseI64ArrayAttr(split.limits),
                           stridesAttr(rw, split.strides), DenseI64ArrayAttr());
}

// reshape(slice(x)) -> slice(reshape(x)) when the reshape only splits the
// slice's dimensions (and the slice has no perm).
struct ReshapeOfSlice : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rw) const override {
    auto s = op.getInput().getDefiningOp<SliceOp>();
    if (!s || s.getPerm())
      return failure();
    Value x = s.getInput();
    auto split = splitOf(s, shapeOf(x), shapeOf(s.getResult()),
                         shapeOf(op.getResult()));
    if (!split)
      return failure();
    auto xt = cast<RankedTensorType>(x.getType());
    Value xr = ReshapeOp::create(rw, op.getLoc(), xt.clone(split->fullOut), x);
    rw.replaceOp(op, createSplit<SliceOp>(rw, op.getLoc(), op.getType(), xr,
                                          *split));
    return success();
  }
};

// transpose(slice{perm p}(x), q) -> slice{perm p o q}(x).
struct TransposeOfSlice : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rw) const override {
    auto s = op.getInput().getDefiningOp<SliceOp>();
    if (!s)
      return failure();
    SmallVector<int64_t> p = permOrIdentity(s.getPerm(), shapeOf(s).size());
    SmallVector<int64_t> perm;
    for (int64_t q : op.getPerm())
      perm.push_back(p[q]);
    rw.replaceOpWithNewOp<SliceOp>(op, op.getResult().getType(), s.getInput(),
                                   s.getStartsAttr(), s.getLimitsAttr(),
                                   s.getStridesAttr(), permAttr(rw, perm));
    return success();
  }
};

// slice_backward(reshape(h)) -> reshape(slice_backward(h)) when the reshape
// merges h's dimensions into the slice's (the forward's split, reversed).
struct SliceBackwardOfReshape : OpRewritePattern<SliceBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceBackwardOp op,
                                PatternRewriter &rw) const override {
    auto r = op.getG().getDefiningOp<ReshapeOp>();
    if (!r || op.getPerm())
      return failure();
    auto split = splitOf(op, shapeOf(op.getDx()), shapeOf(op.getG()),
                         shapeOf(r.getInput()));
    if (!split)
      return failure();
    auto dxt = cast<RankedTensorType>(op.getDx().getType());
    Value dx = createSplit<SliceBackwardOp>(
        rw, op.getLoc(), dxt.clone(split->fullOut), r.getInput(), *split);
    rw.replaceOpWithNewOp<ReshapeOp>(op, dxt, dx);
    return success();
  }
};

// slice_backward{perm p}(transpose(g, q)): g's dimension j is the slice's
// dimension p[q^-1[j]].
struct SliceBackwardOfTranspose : OpRewritePattern<SliceBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceBackwardOp op,
                                PatternRewriter &rw) const override {
    auto t = op.getG().getDefiningOp<TransposeOp>();
    if (!t)
      return failure();
    ArrayRef<int64_t> q = t.getPerm();
    SmallVector<int64_t> p = permOrIdentity(op.getPerm(), q.size());
    SmallVector<int64_t> perm(q.size());
    for (size_t i = 0; i < q.size(); ++i)
      perm[q[i]] = p[i];
    rw.replaceOpWithNewOp<SliceBackwardOp>(
        op, op.getDx().getType(), t.getInput(), op.getStartsAttr(),
        op.getLimitsAttr(), op.getStridesAttr(), permAttr(rw, perm));
    return success();
  }
};

// A term of a cotangent sum: slice_backward(g), or a reshape of one, each
// used only by the sum.
struct SliceTerm {
  SliceBackwardOp slice;
  ReshapeOp reshape; // null when the term is the slice_backward itself
};

std::optional<SliceTerm> sliceTerm(Value v) {
  SliceTerm t;
  if (!v.hasOneUse())
    return std::nullopt;
  t.reshape = v.getDefiningOp<ReshapeOp>();
  if (t.reshape) {
    v = t.reshape.getInput();
    if (!v.hasOneUse())
      return std::nullopt;
  }
  t.slice = v.getDefiningOp<SliceBackwardOp>();
  if (!t.slice)
    return std::nullopt;
  return t;
}

// The most terms one sum may join: far more than a fused projection has,
// and it keeps the search from each add bounded (linear in a long chain of
// adds, such as the sum of a value's many cotangents).
constexpr int kMaxTerms = 64;

// The terms of the tree of graph.add ops rooted at |op| (inner adds have
// |op|'s type and no other user); false as soon as a term is not a
// SliceTerm or there are more than kMaxTerms.
bool sliceTerms(AddOp op, SmallVectorImpl<SliceTerm> &terms, int &adds) {
  if (++adds >= kMaxTerms)
    return false;
  for (Value v : {op.getLhs(), op.getRhs()}) {
    auto inner = v.getDefiningOp<AddOp>();
    if (inner && v.hasOneUse() && v.getType() == op.getType() &&
        inner.getLhs().getType() == op.getType() &&
        inner.getRhs().getType() == op.getType()) {
      if (!sliceTerms(inner, terms, adds))
        return false;
      continue;
    }
    std::optional<SliceTerm> t = sliceTerm(v);
    if (!t)
      return false;
    terms.push_back(*t);
  }
  return true;
}

// add(...(slice_backward(g_1), ..., slice_backward(g_n))) in any order and
// nesting, the slices (stride 1, one perm) tiling the result along one
// axis -> concat(g_1', ..., g_n') ordered by position, with the inverse of
// the slices' perm (each g is the slice permuted). The same through equal
// reshapes of every term. Bitwise the sum except a -0.0 in g stays -0.0
// (the sum with the other terms' +0.0 gave +0.0).
struct SumOfSliceBackwards : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rw) const override {
    if (op.getLhs().getType() != op.getType() ||
        op.getRhs().getType() != op.getType())
      return failure(); // a broadcast
    SmallVector<SliceTerm> terms;
    int adds = 0;
    if (!sliceTerms(op, terms, adds))
      return failure();
    SliceBackwardOp first = terms.front().slice;
    Type full = first.getDx().getType();
    ArrayRef<int64_t> shape = shapeOf(first.getDx());
    for (SliceTerm t : terms) {
      if (t.slice.getDx().getType() != full ||
          t.slice.getPermAttr() != first.getPermAttr() ||
          bool(t.reshape) != bool(terms.front().reshape) ||
          llvm::any_of(stridesOf(t.slice, shape.size()),
                       [](int64_t s) { return s != 1; }))
        return failure();
    }
    // The one axis along which the slices differ from the whole tensor.
    std::optional<size_t> axis;
    for (SliceTerm t : terms)
      for (size_t d = 0; d < shape.size(); ++d)
        if (t.slice.getStarts()[d] != 0 || t.slice.getLimits()[d] != shape[d]) {
          if (axis && *axis != d)
            return failure();
          axis = d;
        }
    if (!axis)
      return failure(); // every term is the whole tensor: they overlap
    // Along it, the slices must tile [0, size) exactly: disjoint, no gaps.
    llvm::sort(terms, [&](SliceTerm a, SliceTerm b) {
      return a.slice.getStarts()[*axis] < b.slice.getStarts()[*axis];
    });
    int64_t next = 0;
    for (SliceTerm t : terms) {
      if (t.slice.getStarts()[*axis] != next ||
          t.slice.getLimits()[*axis] <= next)
        return failure();
      next = t.slice.getLimits()[*axis];
    }
    if (next != shape[*axis])
      return failure();

    SmallVector<Value> inputs;
    for (SliceTerm t : terms)
      inputs.push_back(t.slice.getG());
    // g's dimension i is slice dimension p[i]: transposed back by p^-1.
    SmallVector<int64_t> p = permOrIdentity(first.getPerm(), shape.size());
    SmallVector<int64_t> inv(p.size());
    for (auto [i, pi] : llvm::enumerate(p))
      inv[pi] = int64_t(i);
    Value joined = ConcatOp::create(rw, op.getLoc(), full, inputs,
                                    rw.getI64IntegerAttr(int64_t(*axis)),
                                    permAttr(rw, inv));
    if (terms.front().reshape)
      joined = ReshapeOp::create(rw, op.getLoc(), op.getType(), joined);
    rw.replaceOp(op, joined);
    return success();
  }
};

struct GraphCollapseDataMovementPass
    : ampc::impl::GraphCollapseDataMovementBase<
          GraphCollapseDataMovementPass> {
  void runOnOperation() override {
    GreedyRewriteConfig config;
    // Only the matched chains change: no folding of other ops.
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .enableFolding(false)
        .enableConstantCSE(false);
    RewritePatternSet chains(&getContext());
    chains.add<ReshapeOfSlice, TransposeOfSlice, SliceBackwardOfReshape,
               SliceBackwardOfTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(chains),
                                     config)))
      return signalPassFailure();
    // After the chains have settled, so that each term is one
    // slice_backward with its perm (not a transpose the concat would keep).
    RewritePatternSet sums(&getContext());
    sums.add<SumOfSliceBackwards>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(sums), config)))
      signalPassFailure();
  }
};

} // namespace
