//===- Conv.cpp - Conv, ConvTranspose and the pooling ops -----------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

// 1-D convolutions and pools (Conv1d, MaxPool1d, ... on [N, C, L]) run as
// the 2-D ops on [N, C, 1, L]: the reshapes cost no copy, and the gradient
// flows back through them (a Conv1d weight [O, C/g, K] is reshaped to
// [O, C/g, 1, K] in the graph; the parameter keeps its shape and name).
// |spatial| (input4d's) is 1 or 2; 1-D values are given the height 1
// (stride, dilation, kernel) or 0 (padding).

// ONNX pads are [begin..., end...] per spatial axis; the graph ops pad
// symmetrically.
FailureOr<SmallVector<int64_t>> symmetricPads(ImportState &s, int spatial) {
  std::string autoPad = s.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID") {
    (void)s.error("auto_pad " + autoPad + " is not supported");
    return failure();
  }
  auto pads = s.intsAttr("pads");
  if (!pads)
    return SmallVector<int64_t>{0, 0};
  if (int64_t(pads->size()) != 2 * spatial) {
    (void)s.error("pads has " + Twine(pads->size()) + " entries; a " +
                  Twine(spatial) + "-D input takes " + Twine(2 * spatial));
    return failure();
  }
  for (int a = 0; a < spatial; ++a)
    if ((*pads)[a] != (*pads)[a + spatial]) {
      (void)s.error("asymmetric pads are not supported");
      return failure();
    }
  if (spatial == 1)
    return SmallVector<int64_t>{0, (*pads)[0]};
  return SmallVector<int64_t>{(*pads)[0], (*pads)[1]};
}

// Input 0 as NCHW: a 4-D input as it is, a 3-D one ([N, C, L]) with H = 1;
// |spatial| is set to the input's spatial rank (1 or 2).
FailureOr<Value> input4d(ImportState &s, int &spatial) {
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  spatial = 2;
  if (shape.size() == 3) {
    spatial = 1;
    return reshapeTo(s, *x, {shape[0], shape[1], 1, shape[2]});
  }
  if (shape.size() != 4) {
    (void)s.error("only 1-D (NCL) and 2-D (NCHW) spatial inputs are supported");
    return failure();
  }
  return x;
}

// A 2-D op's result back to [N, C, L] for a 1-D node.
FailureOr<Value> output(ImportState &s, Value r, int spatial) {
  if (spatial == 2)
    return r;
  ArrayRef<int64_t> shape = shapeOf(r);
  return reshapeTo(s, r, {shape[0], shape[1], shape[3]});
}

// strides, dilations and kernel_shape have one entry per spatial axis
// (ONNX), or are absent.
LogicalResult checkPerAxis(ImportState &s, int spatial) {
  for (StringRef name : {"strides", "dilations", "kernel_shape"})
    if (auto v = s.intsAttr(name); v && int64_t(v->size()) != spatial)
      return s.error(name + " has " + Twine(v->size()) + " entries; a " +
                     Twine(spatial) + "-D input takes " + Twine(spatial));
  return success();
}

SmallVector<int64_t> pairAttr(ImportState &s, StringRef name, int spatial = 2) {
  auto v = s.intsAttr(name);
  if (!v)
    return {1, 1};
  if (spatial == 1 && v->size() == 1)
    return {1, (*v)[0]};
  return SmallVector<int64_t>(v->begin(), v->end());
}

LogicalResult conv(ImportState &s) {
  if (failed(s.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape",
                          "pads", "strides"})))
    return failure();
  int spatial = 2;
  FailureOr<Value> x = input4d(s, spatial), w = s.input(1);
  if (failed(x) || failed(w) || failed(checkPerAxis(s, spatial)))
    return failure();
  auto pads = symmetricPads(s, spatial);
  if (failed(pads))
    return failure();
  if (spatial == 1) {
    ArrayRef<int64_t> ws = shapeOf(*w);
    if (ws.size() != 3)
      return s.error("a 1-D convolution's weight must be [O, C/group, K]");
    w = reshapeTo(s, *w, {ws[0], ws[1], 1, ws[2]});
    if (failed(w))
      return failure();
  }
  SmallVector<Value> operands = {*x, *w};
  if (s.hasInput(2)) {
    FailureOr<Value> bias = s.input(2);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
  }
  FailureOr<Value> r = s.emit(
      "graph.conv2d", operands,
      {s.attr("stride", s.b.getDenseI64ArrayAttr(pairAttr(s, "strides", spatial))),
       s.attr("padding", s.b.getDenseI64ArrayAttr(*pads)),
       s.attr("dilation",
              s.b.getDenseI64ArrayAttr(pairAttr(s, "dilations", spatial))),
       s.attr("groups", s.b.getI64IntegerAttr(s.intAttr("group", 1)))});
  if (failed(r) || failed(r = output(s, *r, spatial)))
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
  int spatial = 2;
  FailureOr<Value> x = input4d(s, spatial);
  if (failed(x) || failed(checkPerAxis(s, spatial)))
    return failure();
  auto pads = symmetricPads(s, spatial);
  if (failed(pads))
    return failure();
  bool padded = (*pads)[0] || (*pads)[1];
  if (op == "avg_pool2d" && padded && !s.intAttr("count_include_pad", 0))
    return s.error("count_include_pad=0 with padding is not supported "
                   "(padded zeros count in the divisor)");
  auto kernel = s.intsAttr("kernel_shape");
  if (!kernel || int64_t(kernel->size()) != spatial)
    return s.error("kernel_shape must have " + Twine(spatial) + " entries");
  SmallVector<int64_t> k(kernel->begin(), kernel->end());
  if (spatial == 1)
    k.insert(k.begin(), 1);
  FailureOr<Value> r = s.emit(
      ("graph." + op).str(), {*x},
      {s.attr("kernel_size", s.b.getDenseI64ArrayAttr(k)),
       s.attr("stride",
              s.b.getDenseI64ArrayAttr(pairAttr(s, "strides", spatial))),
       s.attr("padding", s.b.getDenseI64ArrayAttr(*pads))});
  if (failed(r) || failed(r = output(s, *r, spatial)))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult globalAvgPool(ImportState &s) {
  int spatial = 2;
  FailureOr<Value> x = input4d(s, spatial);
  if (failed(x))
    return failure();
  // torch's AdaptiveAvgPool2d((1, 1)) exports as GlobalAveragePool.
  FailureOr<Value> r =
      s.emit("graph.adaptive_avg_pool2d", {*x},
             {s.attr("output_size", s.b.getDenseI64ArrayAttr({1, 1}))});
  if (failed(r) || failed(r = output(s, *r, spatial)))
    return failure();
  s.result(0, *r);
  return success();
}

// GlobalMaxPool (AdaptiveMaxPool2d((1, 1))): one max_pool2d window over H
// and W, whose gradient goes to the first maximum as PyTorch's (reduce_max,
// amax, would split it among ties).
LogicalResult globalMaxPool(ImportState &s) {
  int spatial = 2;
  FailureOr<Value> x = input4d(s, spatial);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> hw = shapeOf(*x).drop_front(2);
  FailureOr<Value> r =
      s.emit("graph.max_pool2d", {*x},
             {s.attr("kernel_size", s.b.getDenseI64ArrayAttr(hw)),
              s.attr("stride", s.b.getDenseI64ArrayAttr(hw)),
              s.attr("padding", s.b.getDenseI64ArrayAttr({0, 0}))});
  if (failed(r) || failed(r = output(s, *r, spatial)))
    return failure();
  s.result(0, *r);
  return success();
}

// ConvTranspose -> graph.conv_transpose2d. ONNX trims a transposed
// convolution's full result (output_padding q included) by pad_begin b and
// pad_end e per side; the graph op trims |padding| from both sides and then
// adds output_padding at the end. So b, e, q map to padding b and
// output_padding q + b - e when that lies in [0, stride); when it is
// negative the result keeps output_padding 0 and a graph.slice cuts the
// end. output_shape and auto_pad SAME_* fix b and e as ONNX's reference does.
LogicalResult convTranspose(ImportState &s) {
  if (failed(s.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape",
                          "output_padding", "output_shape", "pads",
                          "strides"})))
    return failure();
  int spatial = 2;
  FailureOr<Value> x = input4d(s, spatial), w = s.input(1);
  if (failed(x) || failed(w))
    return failure();
  if (spatial == 1)
    return s.error("1-D transposed convolutions (ConvTranspose1d) are not "
                   "supported");
  ArrayRef<int64_t> xs = shapeOf(*x), ws = shapeOf(*w);
  if (ws.size() != 4)
    return s.error("the weight must be [Cin, Cout/group, KH, KW]");
  SmallVector<int64_t> stride = pairAttr(s, "strides"),
                       dil = pairAttr(s, "dilations");
  auto zeros = [](std::optional<std::vector<int64_t>> v, size_t n) {
    return v ? SmallVector<int64_t>(v->begin(), v->end())
             : SmallVector<int64_t>(n, 0);
  };
  SmallVector<int64_t> outPad = zeros(s.intsAttr("output_padding"), 2);
  if (auto k = s.intsAttr("kernel_shape"))
    if (k->size() != 2 || (*k)[0] != ws[2] || (*k)[1] != ws[3])
      return s.error("kernel_shape does not match the weight's spatial "
                     "dimensions");
  if (stride.size() != 2 || dil.size() != 2 || outPad.size() != 2)
    return s.error("strides, dilations and output_padding must have 2 values");
  std::string autoPad = s.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return s.error("auto_pad " + autoPad + " is not supported");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  SmallVector<int64_t> pads = zeros(
      same || autoPad == "VALID" ? std::nullopt : s.intsAttr("pads"), 4);
  if (pads.size() != 4)
    return s.error("pads must have 4 values");
  auto outShape = s.intsAttr("output_shape");
  if (outShape && outShape->size() != 2)
    return s.error("output_shape must have 2 values [H, W]");
  SmallVector<int64_t> padding(2), outputPadding(2), keep = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    // The full result before any trimming.
    int64_t full =
        stride[i] * (xs[2 + i] - 1) + outPad[i] + (ws[2 + i] - 1) * dil[i] + 1;
    int64_t b = pads[i], e = pads[2 + i];
    if (same) {
      int64_t total = full - (outShape ? (*outShape)[i] : xs[2 + i] * stride[i]);
      b = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      e = total - b;
    } else if (outShape) {
      e = full - b - (*outShape)[i]; // output_shape extends or cuts the end
    }
    int64_t q = outPad[i] + b - e;
    if (b < 0 || q >= stride[i] || full - b - e < 1)
      return s.error("pads [" + Twine(b) + ", " + Twine(e) +
                     "] with output_padding " + Twine(outPad[i]) +
                     " on axis " + Twine(2 + i) +
                     " are not supported (needs pad_begin >= 0 and "
                     "output_padding + pad_begin - pad_end < stride " +
                     Twine(stride[i]) + ")");
    if (q < 0)
      keep[i] = full - b - e, q = 0;
    padding[i] = b, outputPadding[i] = q;
  }
  SmallVector<Value> operands = {*x, *w};
  if (s.hasInput(2)) {
    FailureOr<Value> bias = s.input(2);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
  }
  FailureOr<Value> r = s.emit(
      "graph.conv_transpose2d", operands,
      {s.attr("stride", s.b.getDenseI64ArrayAttr(stride)),
       s.attr("padding", s.b.getDenseI64ArrayAttr(padding)),
       s.attr("output_padding", s.b.getDenseI64ArrayAttr(outputPadding)),
       s.attr("dilation", s.b.getDenseI64ArrayAttr(dil)),
       s.attr("groups", s.b.getI64IntegerAttr(s.intAttr("group", 1)))});
  if (failed(r))
    return failure();
  if (keep[0] >= 0 || keep[1] >= 0) {
    SmallVector<int64_t> limits(shapeOf(*r));
    for (int i = 0; i < 2; ++i)
      if (keep[i] >= 0)
        limits[2 + i] = keep[i];
    r = s.emit("graph.slice", {*r},
               {s.attr("starts", s.b.getDenseI64ArrayAttr({0, 0, 0, 0})),
                s.attr("limits", s.b.getDenseI64ArrayAttr(limits))});
    if (failed(r))
      return failure();
  }
  s.result(0, *r);
  return success();
}

} // namespace

void registerConvOps(OpTable &t) {
  t["Conv"] = conv;
  t["MaxPool"] = [](ImportState &s) { return pool(s, "max_pool2d"); };
  t["AveragePool"] = [](ImportState &s) { return pool(s, "avg_pool2d"); };
  t["GlobalAveragePool"] = globalAvgPool;
  t["GlobalMaxPool"] = globalMaxPool;
  t["ConvTranspose"] = convTranspose;
}

} // namespace ampc::onnx
