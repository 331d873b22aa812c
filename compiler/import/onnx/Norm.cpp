//===- Norm.cpp - Softmax, LogSoftmax, LayerNormalization -------------------===//
#include "compiler/import/onnx/ImportState.h"

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
    return s.error("opset " + Twine(s.opset) + " semantics (softmax over the "
                   "flattened dims from axis " + Twine(axis) +
                   ") are supported only on the last axis");
  FailureOr<Value> r = s.emit(("graph." + op).str(), {*x},
                              {s.attr("axis", s.b.getI64IntegerAttr(axis))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult layerNorm(ImportState &s) {
  if (failed(s.onlyAttrs({"axis", "epsilon", "stash_type"})))
    return failure();
  for (size_t i = 1; i < s.node->outputs.size(); ++i)
    if (!s.node->outputs[i].empty())
      return s.error("the Mean and InvStdDev outputs are not supported");
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t rank = int64_t(shapeOf(*x).size());
  int64_t axis = s.intAttr("axis", -1);
  if (axis != -1 && axis != rank - 1)
    return s.error("normalization over axes " + Twine(axis) +
                   ".. is not supported (only the last axis)");
  SmallVector<Value> operands = {*x};
  int32_t hasW = 0, hasB = 0;
  if (s.hasInput(1)) {
    FailureOr<Value> w = s.input(1);
    if (failed(w))
      return failure();
    operands.push_back(*w);
    hasW = 1;
  }
  if (s.hasInput(2)) {
    FailureOr<Value> bias = s.input(2);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
    hasB = 1;
  }
  FailureOr<Value> r = s.emit(
      "graph.layer_norm", operands,
      {s.attr("eps", s.b.getF64FloatAttr(s.floatAttr("epsilon", 1e-5))),
       s.attr("operandSegmentSizes",
              s.b.getDenseI32ArrayAttr({1, hasW, hasB}))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerNormOps(OpTable &t) {
  t["Softmax"] = [](ImportState &s) { return softmaxLike(s, "softmax"); };
  t["LogSoftmax"] = [](ImportState &s) {
    return softmaxLike(s, "log_softmax");
  };
  t["LayerNormalization"] = layerNorm;
}

} // namespace ampc::onnx
