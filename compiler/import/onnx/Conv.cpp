//===- Conv.cpp - Conv, MaxPool, AveragePool, GlobalAveragePool
//-------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

// ONNX pads are [h_begin, w_begin, h_end, w_end]; the graph ops pad
// symmetrically.
FailureOr<SmallVector<int64_t>> symmetricPads(ImportState &s) {
  std::string autoPad = s.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID") {
    (void)s.error("auto_pad " + autoPad + " is not supported");
    return failure();
  }
  auto pads = s.intsAttr("pads");
  if (!pads)
    return SmallVector<int64_t>{0, 0};
  if (pads->size() != 4 || (*pads)[0] != (*pads)[2] ||
      (*pads)[1] != (*pads)[3]) {
    (void)s.error("asymmetric pads are not supported");
    return failure();
  }
  return SmallVector<int64_t>{(*pads)[0], (*pads)[1]};
}

FailureOr<Value> input4d(ImportState &s) {
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  if (shapeOf(*x).size() != 4) {
    (void)s.error("only 2-D spatial inputs (NCHW) are supported");
    return failure();
  }
  return x;
}

SmallVector<int64_t> pairAttr(ImportState &s, StringRef name) {
  auto v = s.intsAttr(name);
  return v ? SmallVector<int64_t>(v->begin(), v->end())
           : SmallVector<int64_t>{1, 1};
}

LogicalResult conv(ImportState &s) {
  if (failed(s.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape",
                          "pads", "strides"})))
    return failure();
  FailureOr<Value> x = input4d(s), w = s.input(1);
  auto pads = symmetricPads(s);
  if (failed(x) || failed(w) || failed(pads))
    return failure();
  SmallVector<Value> operands = {*x, *w};
  if (s.hasInput(2)) {
    FailureOr<Value> bias = s.input(2);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
  }
  FailureOr<Value> r = s.emit(
      "graph.conv2d", operands,
      {s.attr("stride", s.b.getDenseI64ArrayAttr(pairAttr(s, "strides"))),
       s.attr("padding", s.b.getDenseI64ArrayAttr(*pads)),
       s.attr("dilation", s.b.getDenseI64ArrayAttr(pairAttr(s, "dilations"))),
       s.attr("groups", s.b.getI64IntegerAttr(s.intAttr("group", 1)))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult pool(ImportState &s, StringRef op) {
  if (failed(s.onlyAttrs({"auto_pad", "ceil_mode", "count_include_pad",
                          "dilations", "kernel_shape", "pads", "storage_order",
                          "strides"})))
    return failure();
  if (s.node->outputs.size() > 1 && !s.node->outputs[1].empty())
    return s.error("the Indices output is not supported");
  if (s.intAttr("ceil_mode", 0))
    return s.error("ceil_mode=1 is not supported");
  auto dil = s.intsAttr("dilations");
  if (dil && llvm::any_of(*dil, [](int64_t d) { return d != 1; }))
    return s.error("dilations are not supported");
  FailureOr<Value> x = input4d(s);
  auto pads = symmetricPads(s);
  if (failed(x) || failed(pads))
    return failure();
  bool padded = (*pads)[0] || (*pads)[1];
  if (op == "avg_pool2d" && padded && !s.intAttr("count_include_pad", 0))
    return s.error("count_include_pad=0 with padding is not supported "
                   "(padded zeros count in the divisor)");
  auto kernel = s.intsAttr("kernel_shape");
  if (!kernel || kernel->size() != 2)
    return s.error("kernel_shape must have 2 entries");
  FailureOr<Value> r = s.emit(
      ("graph." + op).str(), {*x},
      {s.attr("kernel_size", s.b.getDenseI64ArrayAttr(*kernel)),
       s.attr("stride", s.b.getDenseI64ArrayAttr(pairAttr(s, "strides"))),
       s.attr("padding", s.b.getDenseI64ArrayAttr(*pads))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult globalAvgPool(ImportState &s) {
  FailureOr<Value> x = input4d(s);
  if (failed(x))
    return failure();
  // torch's AdaptiveAvgPool2d((1, 1)) exports as GlobalAveragePool.
  FailureOr<Value> r =
      s.emit("graph.adaptive_avg_pool2d", {*x},
             {s.attr("output_size", s.b.getDenseI64ArrayAttr({1, 1}))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerConvOps(OpTable &t) {
  t["Conv"] = conv;
  t["MaxPool"] = [](ImportState &s) { return pool(s, "max_pool2d"); };
  t["AveragePool"] = [](ImportState &s) { return pool(s, "avg_pool2d"); };
  t["GlobalAveragePool"] = globalAvgPool;
}

} // namespace ampc::onnx
