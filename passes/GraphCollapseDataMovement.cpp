//===- GraphCollapseDataMovement.cpp - Slice/reshape/transpose as one copy -===//
//
// Attention splits heads out of a fused projection as slice -> reshape ->
// transpose (two strided copies per tensor), and its backward writes
// transpose -> reshape -> slice_backward. When the composition is one
// strided view of the source, it becomes one graph.slice (slice_backward)
// with a `perm` over a reshape of the source (a reshape is an alias): one
// launch, each element read and written once, the same bits.
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

SmallVector<int64_t> slicedShape(ArrayRef<int64_t> starts,
                                 ArrayRef<int64_t> limits,
                                 ArrayRef<int64_t> strides) {
  SmallVector<int64_t> s;
  for (size_t d = 0; d < starts.size(); ++d)
    s.push_back((limits[d] - starts[d] + strides[d] - 1) / strides[d]);
  return s;
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
    ArrayRef<int64_t> full = shapeOf(x);
    SmallVector<int64_t> strides(full.size(), 1);
    if (s.getStrides())
      strides.assign(s.getStrides()->begin(), s.getStrides()->end());
    auto split = splitSlice(full, s.getStarts(), s.getLimits(), strides,
                            shapeOf(s.getResult()), shapeOf(op.getResult()));
    if (!split || ArrayRef<int64_t>(split->fullOut) == full)
      return failure();
    auto xt = cast<RankedTensorType>(x.getType());
    Value xr = ReshapeOp::create(rw, op.getLoc(), xt.clone(split->fullOut), x);
    rw.replaceOpWithNewOp<SliceOp>(
        op, op.getResult().getType(), xr,
        rw.getDenseI64ArrayAttr(split->starts),
        rw.getDenseI64ArrayAttr(split->limits),
        stridesAttr(rw, split->strides), DenseI64ArrayAttr());
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
    ArrayRef<int64_t> full = shapeOf(op.getDx());
    SmallVector<int64_t> strides(full.size(), 1);
    if (op.getStrides())
      strides.assign(op.getStrides()->begin(), op.getStrides()->end());
    auto split = splitSlice(full, op.getStarts(), op.getLimits(), strides,
                            shapeOf(op.getG()), shapeOf(r.getInput()));
    if (!split || ArrayRef<int64_t>(split->fullOut) == full)
      return failure();
    auto dxt = cast<RankedTensorType>(op.getDx().getType());
    Value dx = SliceBackwardOp::create(
        rw, op.getLoc(), dxt.clone(split->fullOut), r.getInput(),
        rw.getDenseI64ArrayAttr(split->starts),
        rw.getDenseI64ArrayAttr(split->limits),
        stridesAttr(rw, split->strides), DenseI64ArrayAttr());
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

struct GraphCollapseDataMovementPass
    : ampc::impl::GraphCollapseDataMovementBase<
          GraphCollapseDataMovementPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReshapeOfSlice, TransposeOfSlice, SliceBackwardOfReshape,
                 SliceBackwardOfTranspose>(&getContext());
    GreedyRewriteConfig config;
    // Only the matched chains change: no folding of other ops.
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .enableFolding(false)
        .enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};

} // namespace
