//===- GraphShapes.cpp - Shape inference and verifiers of compute ops -----===//
//
// Each compute op infers its result type from its operands and attributes;
// the messages here are what a user sees for a malformed model file, so they
// name the shapes involved.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

using Types = SmallVectorImpl<Type>;
using Loc = std::optional<Location>;

// Returns |axis| in [0, rank) or fails with a message naming |what|.
FailureOr<int64_t> normalizeAxis(Loc loc, int64_t axis, int64_t rank,
                                 StringRef what = "axis") {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    (void)fail(loc, Twine(what) + " " + Twine(axis) +
                        " is out of range for a tensor of rank " + Twine(rank));
    return failure();
  }
  return a;
}

LogicalResult sameElementType(Loc loc, Value a, Value b, StringRef op) {
  Type ea = tensorOf(a).getElementType(), eb = tensorOf(b).getElementType();
  if (ea != eb) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << op << " operands must share an element type, got " << ea << " and "
       << eb << " (insert a graph.cast)";
    return fail(loc, s);
  }
  return success();
}

LogicalResult sameAsInput(Value input, Types &types) {
  types.push_back(input.getType());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// matmul and batch_matmul: [..., M, K] x [..., K, N] -> [..., M, N], the
// batch dimensions broadcast as in numpy (torch.matmul for operands of rank
// >= 2). graph-desugar turns broadcast batches into explicit broadcast_to
// (or a flattened 2-D matmul), so kernels see equal batch dimensions.
// lhs_transposed / rhs_transposed: the operand holds the transpose of its
// last two axes ([..., K, M], [..., N, K]).
static LogicalResult inferMatmul(StringRef op, Loc loc, Value lhs, Value rhs,
                                 bool lt, bool rt, Types &types) {
  auto l = tensorOf(lhs), r = tensorOf(rhs);
  if (l.getRank() < 2 || r.getRank() < 2)
    return fail(loc, op + " needs operands of rank >= 2, got " +
                         shapeStr(l.getShape()) + " and " +
                         shapeStr(r.getShape()));
  if (failed(sameElementType(loc, lhs, rhs, op)))
    return failure();
  int64_t lr = l.getRank(), rr = r.getRank();
  int64_t m = l.getShape()[lt ? lr - 1 : lr - 2];
  int64_t lk = l.getShape()[lt ? lr - 2 : lr - 1];
  int64_t rk = r.getShape()[rt ? rr - 1 : rr - 2];
  int64_t n = r.getShape()[rt ? rr - 2 : rr - 1];
  if (lk != rk)
    return fail(loc, op + " contraction mismatch: " + shapeStr(l.getShape()) +
                         (lt ? " (transposed)" : "") + " x " +
                         shapeStr(r.getShape()) + (rt ? " (transposed)" : ""));
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(l.getShape().drop_back(2),
                                          r.getShape().drop_back(2), batch))
    return fail(loc, op + " batch dimensions do not broadcast: " +
                         shapeStr(l.getShape()) + " x " +
                         shapeStr(r.getShape()));
  batch.push_back(m);
  batch.push_back(n);
  types.push_back(RankedTensorType::get(batch, l.getElementType()));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                         Types &types) {
  return inferMatmul("matmul", loc, a.getLhs(), a.getRhs(),
                     a.getLhsTransposed(), a.getRhsTransposed(), types);
}

LogicalResult BatchMatmulOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                              Types &types) {
  return inferMatmul("batch_matmul", loc, a.getLhs(), a.getRhs(),
                     a.getLhsTransposed(), a.getRhsTransposed(), types);
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                         Types &types) {
  auto x = tensorOf(a.getInput()), w = tensorOf(a.getWeight());
  if (x.getRank() < 1 || w.getRank() != 2)
    return fail(loc, "linear needs input [..., K] and weight [N, K], got " +
                         shapeStr(x.getShape()) + " and " +
                         shapeStr(w.getShape()));
  if (failed(sameElementType(loc, a.getInput(), a.getWeight(), "linear")))
    return failure();
  if (x.getShape().back() != w.getDimSize(1))
    return fail(loc, "linear input features " +
                         Twine(x.getShape().back()) +
                         " do not match weight " + shapeStr(w.getShape()) +
                         " (weight is [out, in])");
  if (Value b = a.getBias()) {
    auto bt = tensorOf(b);
    if (failed(sameElementType(loc, a.getInput(), b, "linear")))
      return failure();
    if (bt.getRank() != 1 || bt.getDimSize(0) != w.getDimSize(0))
      return fail(loc, "linear bias must be [" + Twine(w.getDimSize(0)) +
                           "], got " + shapeStr(bt.getShape()));
  }
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getDimSize(0);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

static LogicalResult checkPairs(Loc loc, StringRef op,
                                ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> attrs,
                                bool allowZero) {
  for (auto [name, v] : attrs) {
    if (v.size() != 2)
      return fail(loc, op + " " + name + " must have 2 values [h, w], got " +
                           Twine(v.size()));
    for (int64_t x : v)
      if (x < 0 || (x == 0 && !allowZero))
        return fail(loc, op + " " + name + " values must be " +
                             (allowZero ? ">= 0" : "> 0") + ", got " +
                             shapeStr(v));
  }
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                         Types &types) {
  auto x = tensorOf(a.getInput()), w = tensorOf(a.getWeight());
  if (x.getRank() != 4 || w.getRank() != 4)
    return fail(loc, "conv2d needs input [N, C, H, W] and weight [O, C/groups, "
                     "KH, KW], got " +
                         shapeStr(x.getShape()) + " and " +
                         shapeStr(w.getShape()));
  if (failed(sameElementType(loc, a.getInput(), a.getWeight(), "conv2d")) ||
      failed(checkPairs(loc, "conv2d", {{"stride", a.getStride()},
                                        {"dilation", a.getDilation()}},
                        false)) ||
      failed(checkPairs(loc, "conv2d", {{"padding", a.getPadding()}}, true)))
    return failure();
  int64_t g = a.getGroups();
  int64_t c = x.getDimSize(1), o = w.getDimSize(0);
  if (g < 1 || c % g || o % g)
    return fail(loc, "conv2d groups " + Twine(g) + " must divide in channels " +
                         Twine(c) + " and out channels " + Twine(o));
  if (w.getDimSize(1) * g != c)
    return fail(loc, "conv2d weight " + shapeStr(w.getShape()) +
                         " expects " + Twine(w.getDimSize(1) * g) +
                         " input channels, input " + shapeStr(x.getShape()) +
                         " has " + Twine(c));
  if (Value b = a.getBias()) {
    auto bt = tensorOf(b);
    if (failed(sameElementType(loc, a.getInput(), b, "conv2d")))
      return failure();
    if (bt.getRank() != 1 || bt.getDimSize(0) != o)
      return fail(loc, "conv2d bias must be [" + Twine(o) + "], got " +
                           shapeStr(bt.getShape()));
  }
  SmallVector<int64_t> shape = {x.getDimSize(0), o, 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t in = x.getDimSize(2 + i), k = w.getDimSize(2 + i);
    int64_t span = a.getDilation()[i] * (k - 1) + 1;
    int64_t padded = in + 2 * a.getPadding()[i];
    if (padded < span)
      return fail(loc, "conv2d kernel " + shapeStr(w.getShape().drop_front(2)) +
                           " is larger than the padded input " +
                           shapeStr(x.getShape().drop_front(2)));
    shape[2 + i] = (padded - span) / a.getStride()[i] + 1;
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

template <typename PoolAdaptor>
static LogicalResult inferPool(StringRef op, Loc loc, PoolAdaptor a,
                               Types &types) {
  auto x = tensorOf(a.getInput());
  if (x.getRank() != 4)
    return fail(loc, op + " needs input [N, C, H, W], got " +
                         shapeStr(x.getShape()));
  ArrayRef<int64_t> k = a.getKernelSize();
  SmallVector<int64_t> s =
      a.getStride() ? SmallVector<int64_t>(*a.getStride()) : SmallVector<int64_t>(k);
  if (failed(checkPairs(loc, op, {{"kernel_size", k}, {"stride", s}}, false)) ||
      failed(checkPairs(loc, op, {{"padding", a.getPadding()}}, true)))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  for (int i = 0; i < 2; ++i) {
    int64_t p = a.getPadding()[i];
    if (2 * p > k[i])
      return fail(loc, op + " padding should be at most half the kernel size");
    int64_t padded = x.getDimSize(2 + i) + 2 * p;
    if (padded < k[i])
      return fail(loc, op + " kernel " + shapeStr(k) +
                           " is larger than the padded input");
    shape[2 + i] = (padded - k[i]) / s[i] + 1;
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  return inferPool("max_pool2d", loc, a, types);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  return inferPool("avg_pool2d", loc, a, types);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static LogicalResult inferBroadcast(StringRef op, Loc loc, Value lhs, Value rhs,
                                    Types &types) {
  if (failed(sameElementType(loc, lhs, rhs, op)))
    return failure();
  auto l = tensorOf(lhs), r = tensorOf(rhs);
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(l.getShape(), r.getShape(), shape))
    return fail(loc, op + " shapes " + shapeStr(l.getShape()) + " and " +
                         shapeStr(r.getShape()) + " do not broadcast");
  types.push_back(RankedTensorType::get(shape, l.getElementType()));
  return success();
}

#define AMPC_BINARY_INFER(Op, name)                                            \
  LogicalResult Op::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,        \
                                     Types &types) {                           \
    return inferBroadcast(name, loc, a.getLhs(), a.getRhs(), types);           \
  }
AMPC_BINARY_INFER(AddOp, "add")
AMPC_BINARY_INFER(SubOp, "sub")
AMPC_BINARY_INFER(MulOp, "mul")
AMPC_BINARY_INFER(DivOp, "div")
AMPC_BINARY_INFER(MaximumOp, "maximum")
AMPC_BINARY_INFER(MinimumOp, "minimum")
#undef AMPC_BINARY_INFER

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                        Types &types) {
  if (failed(inferBroadcast("where", loc, a.getX(), a.getY(), types)))
    return failure();
  auto xy = cast<RankedTensorType>(types.back());
  ArrayRef<int64_t> c = tensorOf(a.getCondition()).getShape();
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(xy.getShape(), c, shape))
    return fail(loc, "where condition shape " + shapeStr(c) +
                         " does not broadcast with " +
                         shapeStr(xy.getShape()));
  types.back() = RankedTensorType::get(shape, xy.getElementType());
  return success();
}

LogicalResult MaskedFillOp::inferReturnTypes(MLIRContext *, Loc loc,
                                             Adaptor a, Types &types) {
  auto x = tensorOf(a.getInput());
  ArrayRef<int64_t> m = tensorOf(a.getMask()).getShape();
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(x.getShape(), m, shape) ||
      ArrayRef<int64_t>(shape) != x.getShape())
    return fail(loc, "masked_fill mask shape " + shapeStr(m) +
                         " does not broadcast to the input's " +
                         shapeStr(x.getShape()));
  types.push_back(x);
  return success();
}


LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "approximate must be \"none\" or \"tanh\", got \""
                         << getApproximate() << "\"";
  return success();
}

LogicalResult SoftplusOp::verify() {
  if (getBeta().convertToDouble() == 0.0)
    return emitOpError() << "beta must be nonzero";
  return success();
}

LogicalResult ClampOp::verify() {
  if (!getMin() && !getMax())
    return emitOpError() << "needs a min or a max attribute (or both)";
  return success();
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError() << "p must be in [0, 1), got " << p;
  return success();
}

LogicalResult CastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getShape() != out.getShape())
    return emitOpError() << "changes the shape " << shapeStr(in.getShape())
                         << " -> " << shapeStr(out.getShape())
                         << "; a cast only changes the element type";
  return success();
}

template <typename OpT>
static LogicalResult verifySoftmaxAxis(OpT op) {
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  int64_t axis = op.getAxis();
  if (rank == 0 || axis < -rank || axis >= rank)
    return op.emitOpError() << "axis " << axis
                            << " is out of range for a tensor of rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxis(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

// The ops computing in FP32 (Graph_FP32ComputeOp): a result may differ from
// the inferred type in its float element type only.
static bool sameShapesFloatElements(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, actual)) {
    auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getShape() != tb.getShape() ||
        !isa<FloatType>(ta.getElementType()) ||
        !isa<FloatType>(tb.getElementType()))
      return false;
  }
  return true;
}

bool LayerNormOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameShapesFloatElements(l, r);
}
bool RmsNormOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameShapesFloatElements(l, r);
}
bool CrossEntropyOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameShapesFloatElements(l, r);
}

// weight and bias may have any float type: the op computes in FP32.
static LogicalResult checkAffine(StringRef op, StringRef what, Loc loc,
                                 Value input, Value v) {
  if (!v)
    return success();
  int64_t d = tensorOf(input).getShape().back();
  auto t = tensorOf(v);
  if (t.getRank() != 1 || t.getDimSize(0) != d)
    return fail(loc, op + " " + what + " must be [" + Twine(d) + "], got " +
                         shapeStr(t.getShape()));
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  if (tensorOf(a.getInput()).getRank() < 1)
    return fail(loc, "layer_norm needs a tensor of rank >= 1");
  // As in torch.nn.LayerNorm (bias only with a weight); it also keeps the
  // text form `%x, %w[, %b]` unambiguous.
  if (a.getBias() && !a.getWeight())
    return fail(loc, "layer_norm with a bias needs a weight");
  if (failed(checkAffine("layer_norm", "weight", loc, a.getInput(), a.getWeight())) ||
      failed(checkAffine("layer_norm", "bias", loc, a.getInput(), a.getBias())))
    return failure();
  if (!(a.getEps().convertToDouble() > 0))
    return fail(loc, "layer_norm eps must be > 0");
  return sameAsInput(a.getInput(), types);
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                          Types &types) {
  if (tensorOf(a.getInput()).getRank() < 1)
    return fail(loc, "rms_norm needs a tensor of rank >= 1");
  if (failed(checkAffine("rms_norm", "weight", loc, a.getInput(), a.getWeight())))
    return failure();
  if (a.getEps() && !(a.getEps()->convertToDouble() > 0))
    return fail(loc, "rms_norm eps must be > 0");
  return sameAsInput(a.getInput(), types);
}

//===----------------------------------------------------------------------===//
// Indexing and shape
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  auto ids = tensorOf(a.getIds()), table = tensorOf(a.getTable());
  if (table.getRank() != 2)
    return fail(loc, "embedding table must be [V, D], got " +
                         shapeStr(table.getShape()));
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getDimSize(1));
  types.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "changes the element type " << in.getElementType()
                         << " -> " << out.getElementType()
                         << "; use graph.cast";
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << shapeStr(in.getShape()) << " ("
                         << in.getNumElements() << " elements) to "
                         << shapeStr(out.getShape()) << " ("
                         << out.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  auto x = tensorOf(a.getInput());
  ArrayRef<int64_t> perm = a.getPerm();
  if ((int64_t)perm.size() != x.getRank())
    return fail(loc, "transpose perm " + shapeStr(perm) +
                         " must have one entry per dimension of " +
                         shapeStr(x.getShape()));
  SmallVector<bool> used(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.getRank() || used[p])
      return fail(loc, "transpose perm " + shapeStr(perm) +
                           " is not a permutation");
    used[p] = true;
    shape.push_back(x.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                        Types &types) {
  auto x = tensorOf(a.getInput());
  ArrayRef<int64_t> starts = a.getStarts(), limits = a.getLimits();
  SmallVector<int64_t> strides =
      a.getStrides() ? SmallVector<int64_t>(*a.getStrides())
                     : SmallVector<int64_t>(x.getRank(), 1);
  int64_t r = x.getRank();
  if ((int64_t)starts.size() != r || (int64_t)limits.size() != r ||
      (int64_t)strides.size() != r)
    return fail(loc, "slice starts/limits/strides need " + Twine(r) +
                         " entries for " + shapeStr(x.getShape()));
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < r; ++i) {
    if (starts[i] < 0 || starts[i] > limits[i] || limits[i] > x.getDimSize(i) ||
        strides[i] < 1)
      return fail(loc, "slice dimension " + Twine(i) + ": need 0 <= start (" +
                           Twine(starts[i]) + ") <= limit (" +
                           Twine(limits[i]) + ") <= size (" +
                           Twine(x.getDimSize(i)) + ") and stride >= 1");
    shape.push_back((limits[i] - starts[i] + strides[i] - 1) / strides[i]);
  }
  if (auto perm = a.getPerm()) {
    FailureOr<SmallVector<int64_t>> permuted = permuteShape(shape, *perm);
    if (failed(permuted))
      return fail(loc, "slice perm " + shapeStr(*perm) +
                           " is not a permutation of " + Twine(r) + " axes");
    shape = *permuted;
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                         Types &types) {
  if (a.getInputs().empty())
    return fail(loc, "concat needs at least one input");
  auto first = tensorOf(a.getInputs().front());
  FailureOr<int64_t> axis = normalizeAxis(loc, a.getAxis(), first.getRank());
  if (failed(axis))
    return failure();
  // Each input's shape as joined: transposed by the optional perm.
  auto joined = [&](RankedTensorType t) -> FailureOr<SmallVector<int64_t>> {
    if (!a.getPerm())
      return SmallVector<int64_t>(t.getShape());
    return permuteShape(t.getShape(), *a.getPerm());
  };
  if (a.getPerm() && failed(joined(first)))
    return fail(loc, "concat perm " + shapeStr(*a.getPerm()) +
                         " is not a permutation of " +
                         Twine(first.getRank()) + " axes");
  SmallVector<int64_t> shape = *joined(first);
  shape[*axis] = 0;
  for (Value v : a.getInputs()) {
    auto t = tensorOf(v);
    if (t.getElementType() != first.getElementType() ||
        t.getRank() != first.getRank())
      return fail(loc, "concat inputs must share element type and rank");
    SmallVector<int64_t> s = *joined(t), s0 = *joined(first);
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != *axis && s[i] != s0[i])
        return fail(loc, "concat inputs " + shapeStr(s0) + " and " +
                             shapeStr(s) + " differ outside axis " +
                             Twine(*axis));
    shape[*axis] += s[*axis];
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

template <typename ReduceAdaptor>
static LogicalResult inferReduce(StringRef op, Loc loc, ReduceAdaptor a,
                                 Types &types) {
  auto x = tensorOf(a.getInput());
  int64_t r = x.getRank();
  SmallVector<bool> reduced(r, a.getAxes().empty());
  for (int64_t axis : a.getAxes()) {
    FailureOr<int64_t> n = normalizeAxis(loc, axis, r, op.str() + " axis");
    if (failed(n))
      return failure();
    if (reduced[*n])
      return fail(loc, op + " reduces axis " + Twine(*n) + " twice");
    reduced[*n] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[i])
      shape.push_back(x.getDimSize(i));
    else if (a.getKeepdim())
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  return inferReduce("reduce_sum", loc, a, types);
}
LogicalResult ReduceMeanOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                             Types &types) {
  return inferReduce("reduce_mean", loc, a, types);
}
LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  return inferReduce("reduce_max", loc, a, types);
}

//===----------------------------------------------------------------------===//
// Losses and attention
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *, Loc loc,
                                               Adaptor a, Types &types) {
  auto z = tensorOf(a.getLogits()), y = tensorOf(a.getLabels());
  // Class probabilities: a float tensor of the logits' type.
  bool soft = isa<FloatType>(y.getElementType());
  if (soft && y != z)
    return fail(loc, "cross_entropy probability labels " +
                         shapeStr(y.getShape()) +
                         " must have the logits' shape and element type " +
                         shapeStr(z.getShape()));
  if (!soft && (z.getRank() < 1 || z.getShape().drop_back() != y.getShape()))
    return fail(loc, "cross_entropy labels " + shapeStr(y.getShape()) +
                         " must be logits " + shapeStr(z.getShape()) +
                         " without the class axis (classes are last)");
  double ls = a.getLabelSmoothing().convertToDouble();
  if (!(ls >= 0.0 && ls <= 1.0))
    return fail(loc, "cross_entropy label_smoothing must be in [0, 1]");
  types.push_back(RankedTensorType::get({}, z.getElementType()));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                          Types &types) {
  if (failed(sameElementType(loc, a.getInput(), a.getTarget(), "mse_loss")))
    return failure();
  auto p = tensorOf(a.getInput()), t = tensorOf(a.getTarget());
  if (p.getShape() != t.getShape())
    return fail(loc, "mse_loss shapes differ: " + shapeStr(p.getShape()) +
                         " and " + shapeStr(t.getShape()));
  types.push_back(RankedTensorType::get({}, p.getElementType()));
  return success();
}

// The regression losses: equal shapes and element types; a scalar unless
// reduction = "none".
static LogicalResult inferRegressionLoss(StringRef op, Loc loc, Value input,
                                         Value target, StringRef reduction,
                                         Types &types) {
  if (failed(sameElementType(loc, input, target, op)))
    return failure();
  auto p = tensorOf(input), t = tensorOf(target);
  if (p.getShape() != t.getShape())
    return fail(loc, op + " shapes differ: " + shapeStr(p.getShape()) +
                         " and " + shapeStr(t.getShape()));
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return fail(loc, op + " reduction must be \"mean\", \"sum\" or " +
                         "\"none\", got \"" + reduction + "\"");
  types.push_back(reduction == "none"
                      ? p
                      : RankedTensorType::get({}, p.getElementType()));
  return success();
}

LogicalResult L1LossOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                         Types &types) {
  return inferRegressionLoss("l1_loss", loc, a.getInput(), a.getTarget(),
                             a.getReduction(), types);
}

LogicalResult SmoothL1LossOp::inferReturnTypes(MLIRContext *, Loc loc,
                                               Adaptor a, Types &types) {
  if (!(a.getBeta().convertToDouble() >= 0.0))
    return fail(loc, "smooth_l1_loss beta must be >= 0");
  return inferRegressionLoss("smooth_l1_loss", loc, a.getInput(),
                             a.getTarget(), a.getReduction(), types);
}

LogicalResult HuberLossOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                            Types &types) {
  if (!(a.getDelta().convertToDouble() > 0.0))
    return fail(loc, "huber_loss delta must be > 0");
  return inferRegressionLoss("huber_loss", loc, a.getInput(), a.getTarget(),
                             a.getReduction(), types);
}

std::string ampc::graph::attentionOperandError(Value q, Value k, Value v,
                                               Value mask) {
  auto qt = tensorOf(q), kt = tensorOf(k), vt = tensorOf(v);
  if (qt.getRank() != 4 || kt.getRank() != 4 || vt.getRank() != 4)
    return "scaled_dot_product_attention needs q [B, H, T, D], "
           "k [B, H, S, D], v [B, H, S, E]";
  auto qs = qt.getShape(), ks = kt.getShape(), vs = vt.getShape();
  if (qs[0] != ks[0] || qs[0] != vs[0] || ks[1] != vs[1] || qs[3] != ks[3] ||
      ks[2] != vs[2])
    return "scaled_dot_product_attention shapes disagree: q " + shapeStr(qs) +
           ", k " + shapeStr(ks) + ", v " + shapeStr(vs);
  if (qs[1] % ks[1] != 0)
    return "scaled_dot_product_attention: q's " + std::to_string(qs[1]) +
           " heads are not a multiple of k's and v's " +
           std::to_string(ks[1]) + " (grouped-query attention)";
  if (!mask)
    return "";
  auto mt = tensorOf(mask);
  Type me = mt.getElementType();
  if (isa<FloatType>(me) && me != qt.getElementType()) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "scaled_dot_product_attention: a float mask must have q's element "
          "type "
       << qt.getElementType() << ", got " << me
       << " (insert a graph.cast, or use an integer keep-mask)";
    return s;
  }
  SmallVector<int64_t> full{qs[0], qs[1], qs[2], ks[2]};
  auto ms = mt.getShape();
  bool fits = ms.size() <= full.size();
  for (size_t i = 0; fits && i < ms.size(); ++i) {
    int64_t m = ms[ms.size() - 1 - i], f = full[full.size() - 1 - i];
    fits = m == 1 || m == f;
  }
  if (!fits)
    return "scaled_dot_product_attention: mask " + shapeStr(ms) +
           " does not broadcast to [B, Hq, T, S] = " + shapeStr(full);
  return "";
}

LogicalResult
ScaledDotProductAttentionOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                              Types &types) {
  if (failed(sameElementType(loc, a.getQuery(), a.getKey(), "attention")) ||
      failed(sameElementType(loc, a.getQuery(), a.getValue(), "attention")))
    return failure();
  std::string err = attentionOperandError(a.getQuery(), a.getKey(),
                                          a.getValue(), a.getMask());
  if (!err.empty())
    return fail(loc, err);
  double p = a.getDropoutP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return fail(loc, "scaled_dot_product_attention dropout_p must be in "
                     "[0, 1), got " + std::to_string(p));
  auto q = tensorOf(a.getQuery());
  auto qs = q.getShape(), vs = tensorOf(a.getValue()).getShape();
  types.push_back(
      RankedTensorType::get({qs[0], qs[1], qs[2], vs[3]}, q.getElementType()));
  return success();
}

std::string ampc::graph::packedAttentionError(Value qkv, int64_t heads) {
  auto t = tensorOf(qkv);
  if (t.getRank() != 3)
    return "packed_attention needs qkv [B, T, 3E], got " +
           shapeStr(t.getShape());
  if (heads < 1 || t.getShape()[2] % (3 * heads) != 0)
    return "packed_attention: qkv's last dimension " +
           std::to_string(t.getShape()[2]) + " is not 3 * heads * D for " +
           std::to_string(heads) + " heads";
  return "";
}

LogicalResult PackedAttentionOp::inferReturnTypes(MLIRContext *, Loc loc,
                                                  Adaptor a, Types &types) {
  std::string err = packedAttentionError(a.getQkv(), a.getHeads());
  if (!err.empty())
    return fail(loc, err);
  auto t = tensorOf(a.getQkv());
  auto s = t.getShape();
  types.push_back(
      RankedTensorType::get({s[0], s[1], s[2] / 3}, t.getElementType()));
  return success();
}

double PackedAttentionOp::getScaleOrDefault() {
  if (auto s = getScale())
    return s->convertToDouble();
  int64_t e = cast<RankedTensorType>(getQkv().getType()).getShape()[2] / 3;
  return 1.0 / std::sqrt(double(e / getHeads()));
}

double ScaledDotProductAttentionOp::getScaleOrDefault() {
  if (auto s = getScale())
    return s->convertToDouble();
  return 1.0 / std::sqrt(double(cast<RankedTensorType>(getQuery().getType())
                                    .getShape()
                                    .back()));
}
