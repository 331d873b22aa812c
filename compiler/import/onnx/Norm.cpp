//===- Norm.cpp - Softmax, LogSoftmax, Layer/Instance/BatchNormalization --===//
// BatchNormalization: graph.batch_norm with graph.buffer running statistics
// when the model is imported for training (batchNormOp), else decomposed.
#include "compiler/import/onnx/ImportState.h"

#include "dialects/Graph/GraphAttrs.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace ampc::onnx {
namespace {

LogicalResult softmaxLike(ImportState &s, StringRef op) {
  if (failed(s.onlyAttrs({"axis"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t rank = int64_t(shapeOf(*x).size());
  // Before opset 13 the input is coerced to 2-D at `axis` (default 1): the
  // same as a per-axis softmax only on the last axis.
  int64_t axis = s.intAttr("axis", s.opset >= 13 ? -1 : 1);
  int64_t a = axis < 0 ? axis + rank : axis;
  if (s.opset < 13 && a != rank - 1)
    return s.error("opset " + Twine(s.opset) +
                   " semantics (softmax over the "
                   "flattened dims from axis " +
                   Twine(axis) + ") are supported only on the last axis");
  FailureOr<Value> r = s.emit(("graph." + op).str(), {*x},
                              {s.attr("axis", s.b.getI64IntegerAttr(axis))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// A float scalar constant of |like|'s element type.
Value scalarLike(ImportState &s, Value like, double v) {
  auto type = RankedTensorType::get({}, elementTypeOf(like));
  OperationState st(s.loc(), "graph.constant");
  st.addAttribute("value", DenseElementsAttr::get(
                               type, FloatAttr::get(elementTypeOf(like), v)));
  st.addTypes(type);
  return s.b.create(st)->getResult(0);
}

FailureOr<Value> optionalInput(ImportState &s, unsigned i) {
  if (!s.hasInput(i))
    return Value();
  return s.input(i);
}

// Mean and 1/sqrt(var + eps) over |axes| (keepdim), ONNX's optional
// outputs 1 and 2.
LogicalResult statistics(ImportState &s, Value x, ArrayRef<int64_t> axes,
                         double eps) {
  auto axesAttr = s.attr("axes", s.b.getDenseI64ArrayAttr(axes));
  auto keep = s.attr("keepdim", s.b.getBoolAttr(true));
  FailureOr<Value> mean = s.emit("graph.reduce_mean", {x}, {axesAttr, keep});
  if (failed(mean))
    return failure();
  FailureOr<Value> d = s.emit("graph.sub", {x, *mean});
  FailureOr<Value> d2 = failed(d) ? d : s.emit("graph.mul", {*d, *d});
  FailureOr<Value> var =
      failed(d2) ? d2 : s.emit("graph.reduce_mean", {*d2}, {axesAttr, keep});
  FailureOr<Value> ve =
      failed(var) ? var : s.emit("graph.add", {*var, scalarLike(s, x, eps)});
  FailureOr<Value> inv = failed(ve) ? ve : s.emit("graph.rsqrt", {*ve});
  if (failed(inv))
    return failure();
  if (s.node->outputs.size() > 1 && !s.node->outputs[1].empty())
    s.result(1, *mean);
  if (s.node->outputs.size() > 2 && !s.node->outputs[2].empty())
    s.result(2, *inv);
  return success();
}

// graph.layer_norm normalizes the last dimension; over axes [axis, rank)
// the input is flattened to [outer, inner] around it and the scale and
// bias applied after, with broadcasting.
LogicalResult layerNorm(ImportState &s) {
  if (failed(s.onlyAttrs({"axis", "epsilon", "stash_type"})))
    return failure();
  FailureOr<Value> x = s.input(0), w = optionalInput(s, 1),
                   bias = optionalInput(s, 2);
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  int64_t rank = int64_t(shape.size());
  int64_t axis = s.intAttr("axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return s.error("axis out of range");
  double eps = s.floatAttr("epsilon", 1e-5);
  auto epsAttr = s.attr("eps", s.b.getF64FloatAttr(eps));
  FailureOr<Value> y = failure();
  if (axis == rank - 1) {
    SmallVector<Value> operands = {*x};
    if (*w)
      operands.push_back(*w);
    if (*bias)
      operands.push_back(*bias);
    y = s.emit("graph.layer_norm", operands,
               {epsAttr, s.attr("operandSegmentSizes",
                                s.b.getDenseI32ArrayAttr(
                                    {1, *w ? 1 : 0, *bias ? 1 : 0}))});
  } else {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= shape[i];
    Type elem = elementTypeOf(*x);
    FailureOr<Value> flat = s.emit("graph.reshape", {*x}, {},
                                   RankedTensorType::get({outer, inner}, elem));
    if (failed(flat))
      return failure();
    y = s.emit("graph.layer_norm", {*flat},
               {epsAttr, s.attr("operandSegmentSizes",
                                s.b.getDenseI32ArrayAttr({1, 0, 0}))});
    if (failed(y) || failed(y = s.emit("graph.reshape", {*y}, {},
                                       RankedTensorType::get(shape, elem))))
      return failure();
    if (*w && failed(y = s.emit("graph.mul", {*y, *w})))
      return failure();
    if (*bias && failed(y = s.emit("graph.add", {*y, *bias})))
      return failure();
  }
  if (failed(y))
    return failure();
  s.result(0, *y);
  bool wantStats = false;
  for (size_t i = 1; i < s.node->outputs.size(); ++i)
    wantStats |= !s.node->outputs[i].empty();
  if (!wantStats)
    return success();
  SmallVector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i)
    axes.push_back(i);
  return statistics(s, *x, axes, eps);
}

// [C] -> [C, 1, ..., 1] so it broadcasts against [N, C, d1, ...].
FailureOr<Value> channelView(ImportState &s, Value v, int64_t rank) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (shape.size() != 1)
    return (void)s.error("scale, bias, mean and var must be 1-D"), failure();
  SmallVector<int64_t> view = {shape[0]};
  view.append(size_t(rank - 2), 1);
  if (view.size() == 1)
    return v;
  return s.emit("graph.reshape", {v}, {},
                RankedTensorType::get(view, elementTypeOf(v)));
}

// Training mode's outputs 1 and 2: input_mean * momentum + mean * (1 -
// momentum), the same for var (ONNX: the batch's biased variance). They are
// outputs only: the model keeps no state besides its parameters, so a
// training run does not feed them back.
LogicalResult runningStats(ImportState &s, Value mean, Value var) {
  double momentum = s.floatAttr("momentum", 0.9);
  Value stats[2] = {mean, var};
  for (unsigned k = 0; k < 2; ++k) {
    if (s.node->outputs.size() <= k + 1 || s.node->outputs[k + 1].empty())
      continue;
    FailureOr<Value> prev = s.input(3 + k);
    if (failed(prev))
      return failure();
    FailureOr<Value> cur =
        s.emit("graph.reshape", {stats[k]}, {}, prev->getType());
    FailureOr<Value> a =
        failed(cur)
            ? cur
            : s.emit("graph.mul", {*prev, scalarLike(s, *prev, momentum)});
    FailureOr<Value> b =
        failed(a)
            ? a
            : s.emit("graph.mul", {*cur, scalarLike(s, *prev, 1.0 - momentum)});
    FailureOr<Value> r = failed(b) ? b : s.emit("graph.add", {*a, *b});
    if (failed(r))
      return failure();
    s.result(k + 1, *r);
  }
  return success();
}

// The graph.buffer named |name| holding the initializer |t| (a running
// statistic), created after the model's inputs, parameters and buffers
// (one per name: two nodes sharing a statistic share the buffer); its
// values go to the weights file, which --init-weights loads.
Value runningBuffer(ImportState &s, const std::string &name, const Tensor &t,
                    bool ones) {
  Block *block = s.b.getInsertionBlock();
  Operation *before = nullptr;
  for (Operation &op : *block) {
    if (auto buf = dyn_cast<graph::BufferOp>(op))
      if (buf.getName() == name)
        return buf.getResult();
    if (!before && !isa<graph::InputOp, graph::ParamOp, graph::BufferOp>(op))
      before = &op;
  }
  OpBuilder::InsertionGuard guard(s.b);
  if (before)
    s.b.setInsertionPoint(before);
  auto type = RankedTensorType::get(t.shape, s.b.getF32Type());
  mlir::Attribute init =
      ones ? mlir::Attribute(graph::OnesInitAttr::get(s.ctx()))
           : mlir::Attribute(graph::ZerosInitAttr::get(s.ctx()));
  auto buf = graph::BufferOp::create(s.b, s.namedLoc(name), type, name, init);
  Weight w;
  w.name = name;
  w.shape = t.shape;
  w.data.assign(t.f.begin(), t.f.end());
  s.weights->push_back(std::move(w));
  return buf.getResult();
}

// graph.batch_norm, for a model imported for training (with
// training_mode 0 too: PyTorch exports eval-mode graphs, and training the
// import is train mode): batch statistics in the training step, the running
// statistics (graph.buffer, named as the initializers: PyTorch's
// bn.running_mean) updated in place and used in evaluation, as
// torch.nn.BatchNorm. ONNX's momentum m keeps m of the old statistic, PyTorch's
// (graph.batch_norm's) is 1 - m, rounded to 6 decimals since ONNX stores m
// as a float (0.9f gives 0.1, not 0.100000024). The running variance is
// PyTorch's unbiased one (ONNX's training mode would keep the biased).
// False when the node does not fit: a forward-only import (node tests), an
// input not [N, C] or [N, C, H, W], statistics that are not initializers,
// or a node whose running-statistics outputs are read.
FailureOr<bool> batchNormOp(ImportState &s) {
  if (!s.forTraining || !s.weights)
    return false;
  const Tensor *mean = s.constInput(3), *var = s.constInput(4);
  if (!mean || !var || mean->type != kFloat || var->type != kFloat ||
      mean->shape.size() != 1 || var->shape.size() != 1)
    return false;
  for (size_t k = 1; k < s.node->outputs.size(); ++k)
    if (!s.node->outputs[k].empty() && s.usesOf(s.node->outputs[k]) > 0)
      return false;
  FailureOr<Value> x = s.input(0), scale = s.input(1), bias = s.input(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  size_t rank = shapeOf(*x).size();
  if (rank != 2 && rank != 4)
    return false;
  Value rm = runningBuffer(s, s.node->inputs[3], *mean, /*ones=*/false);
  Value rv = runningBuffer(s, s.node->inputs[4], *var, /*ones=*/true);
  double momentum =
      std::round((1.0 - s.floatAttr("momentum", 0.9)) * 1e6) / 1e6;
  FailureOr<Value> y = s.emit(
      "graph.batch_norm", {*x, rm, rv, *scale, *bias},
      {s.attr("eps", s.b.getF64FloatAttr(s.floatAttr("epsilon", 1e-5))),
       s.attr("momentum", s.b.getF64FloatAttr(momentum))});
  if (failed(y))
    return failure();
  s.result(0, *y);
  return true;
}

// y = (x - mean) / sqrt(var + eps) * scale + B per channel (dim 1). With
// training_mode=1 mean and var are the batch's (biased variance, over every
// dim but 1), so gradients flow through them as in PyTorch's train mode;
// otherwise the given running statistics (an eval-mode export).
LogicalResult batchNorm(ImportState &s) {
  if (failed(s.onlyAttrs({"epsilon", "momentum", "training_mode", "spatial"})))
    return failure();
  FailureOr<bool> mapped = batchNormOp(s);
  if (failed(mapped))
    return failure();
  if (*mapped)
    return success();
  bool training = s.intAttr("training_mode", 0);
  for (size_t i = 1; i < s.node->outputs.size(); ++i)
    if (!s.node->outputs[i].empty() && !training)
      return s.error("outputs 1 and 2 exist only in training mode");
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t rank = int64_t(shapeOf(*x).size());
  if (rank < 2)
    return s.error("the input needs a channel dimension");
  double eps = s.floatAttr("epsilon", 1e-5);
  FailureOr<Value> mean = failure(), var = failure();
  if (training) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    auto axesAttr = s.attr("axes", s.b.getDenseI64ArrayAttr(axes));
    auto keep = s.attr("keepdim", s.b.getBoolAttr(true));
    mean = s.emit("graph.reduce_mean", {*x}, {axesAttr, keep});
    if (failed(mean))
      return failure();
    FailureOr<Value> d = s.emit("graph.sub", {*x, *mean});
    FailureOr<Value> d2 = failed(d) ? d : s.emit("graph.mul", {*d, *d});
    var =
        failed(d2) ? d2 : s.emit("graph.reduce_mean", {*d2}, {axesAttr, keep});
    if (failed(var) || failed(runningStats(s, *mean, *var)))
      return failure();
  } else {
    FailureOr<Value> m = s.input(3), v = s.input(4);
    if (failed(m) || failed(v))
      return failure();
    mean = channelView(s, *m, rank);
    var = channelView(s, *v, rank);
  }
  if (failed(mean) || failed(var))
    return failure();
  FailureOr<Value> scale = s.input(1), bias = s.input(2);
  if (failed(scale) || failed(bias) ||
      failed(scale = channelView(s, *scale, rank)) ||
      failed(bias = channelView(s, *bias, rank)))
    return failure();
  FailureOr<Value> ve = s.emit("graph.add", {*var, scalarLike(s, *x, eps)});
  FailureOr<Value> inv = failed(ve) ? ve : s.emit("graph.rsqrt", {*ve});
  FailureOr<Value> d = failed(inv) ? inv : s.emit("graph.sub", {*x, *mean});
  FailureOr<Value> n = failed(d) ? d : s.emit("graph.mul", {*d, *inv});
  FailureOr<Value> sc = failed(n) ? n : s.emit("graph.mul", {*n, *scale});
  FailureOr<Value> y = failed(sc) ? sc : s.emit("graph.add", {*sc, *bias});
  if (failed(y))
    return failure();
  s.result(0, *y);
  return success();
}

// InstanceNormalization(x, scale, B): each (sample, channel) normalised
// over its own H x W, then scaled and shifted per channel; that is
// graph.group_norm with one channel per group (nn.InstanceNorm2d without
// running statistics, its default).
LogicalResult instanceNorm(ImportState &s) {
  if (failed(s.onlyAttrs({"epsilon"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  FailureOr<Value> scale = failed(x) ? x : s.input(1);
  FailureOr<Value> bias = failed(scale) ? scale : s.input(2);
  if (failed(bias))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  if (shape.size() < 3)
    return s.error("needs an input [N, C, D1, ...], got rank " +
                   Twine(shape.size()));
  FailureOr<Value> r = s.emit(
      "graph.group_norm", {*x, *scale, *bias},
      {s.attr("num_groups", s.b.getI64IntegerAttr(shape[1])),
       s.attr("eps", s.b.getF64FloatAttr(s.floatAttr("epsilon", 1e-5)))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerNormOps(OpTable &t) {
  t["BatchNormalization"] = batchNorm;
  t["Softmax"] = [](ImportState &s) { return softmaxLike(s, "softmax"); };
  t["LogSoftmax"] = [](ImportState &s) {
    return softmaxLike(s, "log_softmax");
  };
  t["LayerNormalization"] = layerNorm;
  t["InstanceNormalization"] = instanceNorm;
}

} // namespace ampc::onnx
