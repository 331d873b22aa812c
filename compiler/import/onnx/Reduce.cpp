//===- Reduce.cpp - ReduceSum, ReduceMean, ReduceMax, ReduceL2 and kin ----===//
//
// Axes are an attribute up to opset 17 (ReduceSum: up to 12) and an input
// from opset 18 (ReduceSum: 13).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include <limits>

using namespace mlir;

namespace ampc::onnx {
namespace {

// What ReduceL1/L2/SumSquare sum: |x| or x * x.
enum class Pre { None, Abs, Square };

// graph.OP of input 0 (|x| or x * x first, per |pre|) over the node's axes.
FailureOr<Value> reduceOf(ImportState &s, StringRef op, Pre pre) {
  if (failed(s.onlyAttrs({"axes", "keepdims", "noop_with_empty_axes"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  if (pre == Pre::Abs)
    x = s.emit("graph.abs", {*x});
  else if (pre == Pre::Square) // pow: FP32 under AMP, as PyTorch's norm
    x = s.emit("graph.pow", {*x},
               {s.attr("exponent", s.b.getF64FloatAttr(2.0))});
  if (failed(x))
    return failure();
  std::vector<int64_t> axes;
  if (auto a = s.intsAttr("axes")) {
    axes = *a;
  } else if (s.hasInput(1)) {
    auto a2 = s.intsInput(1, "axes");
    if (failed(a2))
      return failure();
    axes = *a2;
  }
  if (axes.empty()) {
    if (s.intAttr("noop_with_empty_axes", 0))
      return x;
    for (int64_t i = 0; i < int64_t(shapeOf(*x).size()); ++i)
      axes.push_back(i);
  }
  return s.emit(
      ("graph." + op).str(), {*x},
      {s.attr("axes", s.b.getDenseI64ArrayAttr(axes)),
       s.attr("keepdim", s.b.getBoolAttr(s.intAttr("keepdims", 1) != 0))});
}

LogicalResult reduce(ImportState &s, StringRef op, Pre pre = Pre::None) {
  FailureOr<Value> r = reduceOf(s, op, pre);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// ReduceL2 (x.norm(), F.normalize): sqrt of the sum of squares, the sum
// clamped below at FLT_MIN first. That changes no value sqrt can tell
// apart from 0 (1e-19 where the sum is 0) and keeps the gradient of an
// all-zero row 0, as PyTorch's norm backward gives it, where sqrt's would
// be inf times 0 (NaN). Under AMP the square (graph.pow) and the sum run
// in FP32, on autocast's fp32 list as PyTorch's norm is, so the clamp's
// value survives and no square overflows fp16.
LogicalResult reduceL2(ImportState &s) {
  FailureOr<Value> r = reduceOf(s, "reduce_sum", Pre::Square);
  if (failed(r) ||
      failed(r = s.emit("graph.clamp", {*r},
                        {s.attr("min", s.b.getF64FloatAttr(
                                           std::numeric_limits<float>::min()))})) ||
      failed(r = s.emit("graph.sqrt", {*r})))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerReduceOps(OpTable &t) {
  t["ReduceSum"] = [](ImportState &s) { return reduce(s, "reduce_sum"); };
  t["ReduceMean"] = [](ImportState &s) { return reduce(s, "reduce_mean"); };
  t["ReduceMax"] = [](ImportState &s) { return reduce(s, "reduce_max"); };
  t["ReduceL1"] = [](ImportState &s) {
    return reduce(s, "reduce_sum", Pre::Abs);
  };
  t["ReduceSumSquare"] = [](ImportState &s) {
    return reduce(s, "reduce_sum", Pre::Square);
  };
  t["ReduceL2"] = reduceL2;
}

} // namespace ampc::onnx
