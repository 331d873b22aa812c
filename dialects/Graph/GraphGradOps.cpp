//===- GraphGradOps.cpp - Verifiers of the backward-only ops --------------===//
//
// Each backward op spells its result types; the verifiers check them against
// the forward op's shape rules (the cotangent `g` must have the shape the
// forward op gives its result).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

// Fails with a message naming both types unless |a| and |b| are equal.
LogicalResult sameType(Operation *op, Value a, StringRef aName, Value b,
                       StringRef bName) {
  if (a.getType() == b.getType())
    return success();
  return op->emitOpError() << bName << " must have the type of " << aName
                           << " " << a.getType() << ", got " << b.getType();
}

LogicalResult sameElementType(Operation *op, Value a, StringRef aName, Value b,
                              StringRef bName) {
  Type ea = tensorOf(a).getElementType(), eb = tensorOf(b).getElementType();
  if (ea == eb)
    return success();
  return op->emitOpError() << bName << " must have the element type of "
                           << aName << " (" << ea << "), got " << eb;
}

LogicalResult checkShape(Operation *op, StringRef what, Value v,
                         ArrayRef<int64_t> expected) {
  if (tensorOf(v).getShape() == ArrayRef<int64_t>(expected))
    return success();
  return op->emitOpError() << what << " must be " << shapeStr(expected)
                           << ", got " << shapeStr(tensorOf(v).getShape());
}

LogicalResult checkPairs(Operation *op, ArrayRef<int64_t> v, StringRef name,
                         bool allowZero) {
  if (v.size() != 2)
    return op->emitOpError() << name << " must have 2 values [h, w], got "
                             << v.size();
  for (int64_t x : v)
    if (x < 0 || (x == 0 && !allowZero))
      return op->emitOpError() << name << " values must be "
                               << (allowZero ? ">= 0" : "> 0") << ", got "
                               << shapeStr(v);
  return success();
}

// The result shape of graph.conv2d for input |x| and weight |w| (NCHW).
FailureOr<SmallVector<int64_t>>
convResultShape(Operation *op, ArrayRef<int64_t> x, ArrayRef<int64_t> w,
                ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                ArrayRef<int64_t> dilation, int64_t groups) {
  if (x.size() != 4 || w.size() != 4)
    return op->emitOpError() << "needs input [N, C, H, W] and weight "
                                "[O, C/groups, KH, KW], got "
                             << shapeStr(x) << " and " << shapeStr(w);
  if (failed(checkPairs(op, stride, "stride", false)) ||
      failed(checkPairs(op, dilation, "dilation", false)) ||
      failed(checkPairs(op, padding, "padding", true)))
    return failure();
  if (groups < 1 || x[1] % groups || w[0] % groups || w[1] * groups != x[1])
    return op->emitOpError()
           << "groups " << groups << " do not fit input " << shapeStr(x)
           << " and weight " << shapeStr(w);
  SmallVector<int64_t> shape = {x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t span = dilation[i] * (w[2 + i] - 1) + 1;
    int64_t padded = x[2 + i] + 2 * padding[i];
    if (padded < span)
      return op->emitOpError() << "kernel " << shapeStr(w.drop_front(2))
                               << " is larger than the padded input "
                               << shapeStr(x.drop_front(2));
    shape[2 + i] = (padded - span) / stride[i] + 1;
  }
  return shape;
}

// The result shape of graph.max_pool2d / avg_pool2d for input |x|.
template <typename OpT>
FailureOr<SmallVector<int64_t>> poolResultShape(OpT op, ArrayRef<int64_t> x) {
  if (x.size() != 4)
    return op.emitOpError() << "needs an input [N, C, H, W], got "
                            << shapeStr(x);
  ArrayRef<int64_t> k = op.getKernelSize();
  SmallVector<int64_t> s = op.getStride() ? SmallVector<int64_t>(*op.getStride())
                                          : SmallVector<int64_t>(k);
  if (failed(checkPairs(op, k, "kernel_size", false)) ||
      failed(checkPairs(op, s, "stride", false)) ||
      failed(checkPairs(op, op.getPadding(), "padding", true)))
    return failure();
  SmallVector<int64_t> shape(x);
  for (int i = 0; i < 2; ++i) {
    int64_t p = op.getPadding()[i];
    if (2 * p > k[i] || x[2 + i] + 2 * p < k[i])
      return op.emitOpError() << "kernel " << shapeStr(k) << " and padding "
                              << shapeStr(op.getPadding())
                              << " do not fit the input " << shapeStr(x);
    shape[2 + i] = (x[2 + i] + 2 * p - k[i]) / s[i] + 1;
  }
  return shape;
}

} // namespace

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  if (failed(sameElementType(*this, getX(), "the input", getResult(),
                             "the result")))
    return failure();
  ArrayRef<int64_t> in = tensorOf(getX()).getShape();
  ArrayRef<int64_t> out = tensorOf(getResult()).getShape();
  bool ok = in.size() <= out.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    int64_t a = in[in.size() - 1 - i], b = out[out.size() - 1 - i];
    ok = a == b || a == 1;
  }
  if (!ok)
    return emitOpError() << "cannot broadcast " << shapeStr(in) << " to "
                         << shapeStr(out);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult ReluBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  return success();
}

LogicalResult GeluBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "approximate must be \"none\" or \"tanh\", got \""
                         << getApproximate() << "\"";
  return success();
}

LogicalResult SiluBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  return success();
}

LogicalResult LeakyReluBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  return success();
}

LogicalResult EluBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  return success();
}

LogicalResult SoftplusBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  if (getBeta().convertToDouble() == 0.0)
    return emitOpError() << "beta must be nonzero";
  return success();
}

LogicalResult ClampBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getG(), "g")) ||
      failed(sameType(*this, getX(), "x", getDx(), "dx")))
    return failure();
  if (!getMin() && !getMax())
    return emitOpError() << "needs a min or a max attribute (or both)";
  return success();
}

LogicalResult MaximumBackwardOp::verify() {
  if (failed(sameType(*this, getA(), "a", getB(), "b")) ||
      failed(sameType(*this, getA(), "a", getG(), "g")) ||
      failed(sameType(*this, getA(), "a", getDa(), "da")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult Conv2dBackwardInputOp::verify() {
  if (failed(sameElementType(*this, getG(), "g", getWeight(), "weight")) ||
      failed(sameElementType(*this, getG(), "g", getDx(), "dx")))
    return failure();
  auto shape = convResultShape(*this, tensorOf(getDx()).getShape(),
                               tensorOf(getWeight()).getShape(), getStride(),
                               getPadding(), getDilation(), getGroups());
  if (failed(shape))
    return failure();
  return checkShape(*this, "g (the conv2d result's shape)", getG(), *shape);
}

LogicalResult Conv2dBackwardWeightOp::verify() {
  if (failed(sameElementType(*this, getX(), "x", getG(), "g")) ||
      failed(sameElementType(*this, getX(), "x", getDw(), "dw")))
    return failure();
  auto shape = convResultShape(*this, tensorOf(getX()).getShape(),
                               tensorOf(getDw()).getShape(), getStride(),
                               getPadding(), getDilation(), getGroups());
  if (failed(shape))
    return failure();
  return checkShape(*this, "g (the conv2d result's shape)", getG(), *shape);
}

LogicalResult MaxPool2dBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getDx(), "dx")) ||
      failed(sameElementType(*this, getX(), "x", getG(), "g")))
    return failure();
  auto shape = poolResultShape(*this, tensorOf(getX()).getShape());
  if (failed(shape))
    return failure();
  return checkShape(*this, "g (the pool result's shape)", getG(), *shape);
}

LogicalResult AvgPool2dBackwardOp::verify() {
  if (failed(sameElementType(*this, getG(), "g", getDx(), "dx")))
    return failure();
  auto shape = poolResultShape(*this, tensorOf(getDx()).getShape());
  if (failed(shape))
    return failure();
  return checkShape(*this, "g (the pool result's shape)", getG(), *shape);
}

//===----------------------------------------------------------------------===//
// Indexing, reductions, losses
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingBackwardOp::verify() {
  if (failed(sameElementType(*this, getG(), "g", getDtable(), "dtable")))
    return failure();
  auto table = tensorOf(getDtable());
  if (table.getRank() != 2)
    return emitOpError() << "dtable must be [V, D], got "
                         << shapeStr(table.getShape());
  SmallVector<int64_t> shape(tensorOf(getIds()).getShape());
  shape.push_back(table.getDimSize(1));
  if (failed(checkShape(*this, "g (ids' shape + [D])", getG(), shape)))
    return failure();
  if (!getInit())
    return success();
  // The FP32 sum plus init, rounded once: an f32 table.
  if (!table.getElementType().isF32())
    return emitOpError() << "with init, dtable must be f32, got " << table;
  return checkShape(*this, "init (dtable's shape)", getInit(),
                    table.getShape());
}

// cross_entropy_backward and cross_entropy_with_grad: logits [..., C],
// class-index labels [...], a scalar g, dlogits of the logits' shape.
template <typename Op> LogicalResult verifyCrossEntropyGrad(Op op) {
  // Any float types: the op computes in FP32 (graph-absorb-casts).
  auto z = tensorOf(op.getLogits());
  if (z.getRank() < 1)
    return op.emitOpError() << "logits need a class axis";
  if (failed(checkShape(op, "dlogits (the logits' shape)", op.getDlogits(),
                        z.getShape())) ||
      failed(checkShape(op, "labels (logits without the class axis)",
                        op.getLabels(), z.getShape().drop_back())) ||
      failed(checkShape(op, "g (the scalar loss cotangent)", op.getG(), {})))
    return failure();
  double ls = op.getLabelSmoothing().convertToDouble();
  if (!(ls >= 0.0 && ls <= 1.0))
    return op.emitOpError() << "label_smoothing must be in [0, 1], got " << ls;
  return success();
}

LogicalResult CrossEntropyBackwardOp::verify() {
  return verifyCrossEntropyGrad(*this);
}

LogicalResult CrossEntropyWithGradOp::verify() {
  if (failed(verifyCrossEntropyGrad(*this)))
    return failure();
  return checkShape(*this, "the loss (a scalar)", getLoss(), {});
}

LogicalResult SliceBackwardOp::verify() {
  if (failed(sameElementType(*this, getG(), "g", getDx(), "dx")))
    return failure();
  auto x = tensorOf(getDx());
  int64_t r = x.getRank();
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits();
  SmallVector<int64_t> strides = getStrides()
                                     ? SmallVector<int64_t>(*getStrides())
                                     : SmallVector<int64_t>(r, 1);
  if ((int64_t)starts.size() != r || (int64_t)limits.size() != r ||
      (int64_t)strides.size() != r)
    return emitOpError() << "starts/limits/strides need " << r
                         << " entries for dx " << shapeStr(x.getShape());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < r; ++i) {
    if (starts[i] < 0 || starts[i] > limits[i] ||
        limits[i] > x.getDimSize(i) || strides[i] < 1)
      return emitOpError() << "dimension " << i << ": need 0 <= start ("
                           << starts[i] << ") <= limit (" << limits[i]
                           << ") <= size (" << x.getDimSize(i)
                           << ") and stride >= 1";
    shape.push_back((limits[i] - starts[i] + strides[i] - 1) / strides[i]);
  }
  if (auto perm = getPerm()) {
    FailureOr<SmallVector<int64_t>> permuted = permuteShape(shape, *perm);
    if (failed(permuted))
      return emitOpError() << "perm " << shapeStr(*perm)
                           << " is not a permutation of " << r << " axes";
    shape = *permuted;
  }
  return checkShape(*this, "g (the slice result's shape)", getG(), shape);
}

LogicalResult ReduceMaxBackwardOp::verify() {
  if (failed(sameType(*this, getX(), "x", getDx(), "dx")) ||
      failed(sameElementType(*this, getX(), "x", getG(), "g")))
    return failure();
  auto x = tensorOf(getX());
  int64_t r = x.getRank();
  SmallVector<bool> reduced(r, getAxes().empty());
  for (int64_t axis : getAxes()) {
    int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r || reduced[a])
      return emitOpError() << "axes " << shapeStr(getAxes())
                           << " are out of range or repeated for rank " << r;
    reduced[a] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[i])
      shape.push_back(x.getDimSize(i));
    else if (getKeepdim())
      shape.push_back(1);
  }
  return checkShape(*this, "g (the reduce result's shape)", getG(), shape);
}

//===----------------------------------------------------------------------===//
// Normalization and attention
//===----------------------------------------------------------------------===//

// x, weight, g and dx may have any float types (the ops compute in FP32,
// graph-absorb-casts); the shapes must agree.
template <typename OpT>
static LogicalResult verifyNormBackward(OpT op) {
  auto x = tensorOf(op.getX());
  if (failed(checkShape(op, "g (x's shape)", op.getG(), x.getShape())) ||
      failed(checkShape(op, "dx (x's shape)", op.getDx(), x.getShape())) ||
      failed(sameType(op, op.getWeight(), "weight", op.getDweight(),
                      "dweight")))
    return failure();
  if (x.getRank() < 1)
    return op.emitOpError() << "needs x of rank >= 1";
  if (failed(checkShape(op, "weight", op.getWeight(), {x.getShape().back()})))
    return failure();
  // rms_norm_backward's eps is optional (the machine epsilon of x's type).
  std::optional<llvm::APFloat> eps = op.getEps();
  if (eps && !(eps->convertToDouble() > 0))
    return op.emitOpError() << "eps must be > 0";
  return success();
}

LogicalResult LayerNormBackwardOp::verify() {
  if (failed(verifyNormBackward(*this)))
    return failure();
  return sameType(*this, getWeight(), "weight", getDbias(), "dbias");
}

LogicalResult RmsNormBackwardOp::verify() { return verifyNormBackward(*this); }

LogicalResult PackedAttentionBackwardOp::verify() {
  if (failed(sameType(*this, getQkv(), "qkv", getDqkv(), "dqkv")) ||
      failed(sameElementType(*this, getQkv(), "qkv", getG(), "g")))
    return failure();
  std::string err = packedAttentionError(getQkv(), getHeads());
  if (!err.empty())
    return emitOpError() << err;
  auto s = tensorOf(getQkv()).getShape();
  return checkShape(*this, "g (the attention result's shape)", getG(),
                    {s[0], s[1], s[2] / 3});
}

namespace {

// packed_attention's qkv and heads, and |stats| f32 [B, heads, T].
LogicalResult verifyPackedStats(Operation *op, Value qkv, int64_t heads,
                                Value stats) {
  std::string err = packedAttentionError(qkv, heads);
  if (!err.empty())
    return op->emitOpError() << err;
  if (!tensorOf(stats).getElementType().isF32())
    return op->emitOpError() << "stats must be f32, got "
                             << tensorOf(stats).getElementType();
  auto s = tensorOf(qkv).getShape();
  return checkShape(op, "stats ([B, heads, T])", stats, {s[0], heads, s[1]});
}

} // namespace

LogicalResult PackedAttentionStatsOp::verify() {
  if (failed(verifyPackedStats(*this, getQkv(), getHeads(), getStats())) ||
      failed(sameElementType(*this, getQkv(), "qkv", getResult(), "result")))
    return failure();
  auto s = tensorOf(getQkv()).getShape();
  return checkShape(*this, "the result", getResult(), {s[0], s[1], s[2] / 3});
}

LogicalResult PackedAttentionStatsBackwardOp::verify() {
  if (failed(sameType(*this, getQkv(), "qkv", getDqkv(), "dqkv")) ||
      failed(sameElementType(*this, getQkv(), "qkv", getG(), "g")) ||
      failed(sameType(*this, getG(), "g", getO(), "o")) ||
      failed(verifyPackedStats(*this, getQkv(), getHeads(), getStats())))
    return failure();
  auto s = tensorOf(getQkv()).getShape();
  return checkShape(*this, "g (the attention result's shape)", getG(),
                    {s[0], s[1], s[2] / 3});
}

namespace {

// q, k, v of an attention without a mask, of one element type, and |stats|
// f32 [B, Hq, T].
LogicalResult verifyAttentionStats(Operation *op, Value q, Value k, Value v,
                                   Value stats) {
  if (failed(sameElementType(op, q, "q", k, "k")) ||
      failed(sameElementType(op, q, "q", v, "v")))
    return failure();
  std::string err = attentionOperandError(q, k, v, Value());
  if (!err.empty())
    return op->emitOpError() << err;
  if (!tensorOf(stats).getElementType().isF32())
    return op->emitOpError() << "stats must be f32, got "
                             << tensorOf(stats).getElementType();
  auto qs = tensorOf(q).getShape();
  return checkShape(op, "stats ([B, Hq, T])", stats, {qs[0], qs[1], qs[2]});
}

// The attention result's shape [B, Hq, T, E].
SmallVector<int64_t> attentionResultShape(Value q, Value v) {
  auto qs = tensorOf(q).getShape(), vs = tensorOf(v).getShape();
  return {qs[0], qs[1], qs[2], vs[3]};
}

} // namespace

LogicalResult ScaledDotProductAttentionStatsOp::verify() {
  if (failed(verifyAttentionStats(*this, getQ(), getK(), getV(), getStats())) ||
      failed(sameElementType(*this, getQ(), "q", getResult(), "result")))
    return failure();
  return checkShape(*this, "the result", getResult(),
                    attentionResultShape(getQ(), getV()));
}

LogicalResult ScaledDotProductAttentionStatsBackwardOp::verify() {
  if (failed(verifyAttentionStats(*this, getQ(), getK(), getV(), getStats())) ||
      failed(sameType(*this, getQ(), "q", getDq(), "dq")) ||
      failed(sameType(*this, getK(), "k", getDk(), "dk")) ||
      failed(sameType(*this, getV(), "v", getDv(), "dv")) ||
      failed(sameElementType(*this, getQ(), "q", getG(), "g")) ||
      failed(sameType(*this, getG(), "g", getO(), "o")))
    return failure();
  return checkShape(*this, "g (the attention result's shape)", getG(),
                    attentionResultShape(getQ(), getV()));
}

LogicalResult ScaledDotProductAttentionBackwardOp::verify() {
  if (failed(sameType(*this, getQ(), "q", getDq(), "dq")) ||
      failed(sameType(*this, getK(), "k", getDk(), "dk")) ||
      failed(sameType(*this, getV(), "v", getDv(), "dv")) ||
      failed(sameElementType(*this, getQ(), "q", getK(), "k")) ||
      failed(sameElementType(*this, getQ(), "q", getV(), "v")) ||
      failed(sameElementType(*this, getQ(), "q", getG(), "g")))
    return failure();
  std::string err = attentionOperandError(getQ(), getK(), getV(), getMask());
  if (!err.empty())
    return emitOpError() << err;
  auto qs = tensorOf(getQ()).getShape(), vs = tensorOf(getV()).getShape();
  return checkShape(*this, "g (the attention result's shape)", getG(),
                    {qs[0], qs[1], qs[2], vs[3]});
}
