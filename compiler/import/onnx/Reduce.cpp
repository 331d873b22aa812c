//===- Reduce.cpp - ReduceSum, ReduceMean, ReduceMax
//------------------------===//
//
// Axes are an attribute up to opset 17 (ReduceSum: up to 12) and an input
// from opset 18 (ReduceSum: 13).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

LogicalResult reduce(ImportState &s, StringRef op) {
  if (failed(s.onlyAttrs({"axes", "keepdims", "noop_with_empty_axes"})))
    return failure();
  FailureOr<Value> x = s.input(0);
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
    if (s.intAttr("noop_with_empty_axes", 0)) {
      s.result(0, *x);
      return success();
    }
    for (int64_t i = 0; i < int64_t(shapeOf(*x).size()); ++i)
      axes.push_back(i);
  }
  FailureOr<Value> r = s.emit(
      ("graph." + op).str(), {*x},
      {s.attr("axes", s.b.getDenseI64ArrayAttr(axes)),
       s.attr("keepdim", s.b.getBoolAttr(s.intAttr("keepdims", 1) != 0))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerReduceOps(OpTable &t) {
  t["ReduceSum"] = [](ImportState &s) { return reduce(s, "reduce_sum"); };
  t["ReduceMean"] = [](ImportState &s) { return reduce(s, "reduce_mean"); };
  t["ReduceMax"] = [](ImportState &s) { return reduce(s, "reduce_max"); };
}

} // namespace ampc::onnx
