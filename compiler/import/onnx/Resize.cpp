//===- Resize.cpp - Resize and Upsample as graph.upsample_nearest2d --------===//
//
// What torch.onnx writes for F.interpolate(mode="nearest"): Resize with
// mode=nearest, coordinate_transformation_mode=asymmetric and
// nearest_mode=floor (opset 11+), Resize with mode=nearest (opset 10), or
// Upsample (opset 7-9). All read output row i from input row
// floor(i / scale), which is graph.upsample_nearest2d. Scales (or sizes) must
// be known at import time and leave N and C alone. Any other mode or
// coordinate mapping is an error naming the attribute.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

// Checks that the string attribute |name| (default |dflt|) is |want|.
LogicalResult requireString(ImportState &s, StringRef name, StringRef dflt,
                            StringRef want) {
  std::string v = s.stringAttr(name, dflt);
  if (v == want)
    return success();
  return s.error(name + " " + v + " is not supported (only " + want +
                 ": F.interpolate's mode=\"nearest\")");
}

// Emits upsample_nearest2d of input 0 from float |scales| [1, 1, sh, sw]
// or, when empty, integer |sizes| [N, C, OH, OW].
LogicalResult emitNearest(ImportState &s, ArrayRef<double> scales,
                          ArrayRef<int64_t> sizes) {
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  if (shape.size() != 4)
    return s.error("only 4-D inputs (NCHW) are supported");
  SmallVector<NamedAttribute> attrs;
  if (!scales.empty()) {
    if (scales.size() != 4 || scales[0] != 1.0 || scales[1] != 1.0)
      return s.error("scales must be [1, 1, scale_h, scale_w]");
    attrs = {s.attr("scales_h", s.b.getF64FloatAttr(scales[2])),
             s.attr("scales_w", s.b.getF64FloatAttr(scales[3]))};
  } else {
    if (sizes.size() != 4 || sizes[0] != shape[0] || sizes[1] != shape[1])
      return s.error("sizes must be [N, C, height, width] with the input's N "
                     "and C");
    attrs = {s.attr("size", s.b.getDenseI64ArrayAttr(sizes.drop_front(2)))};
  }
  FailureOr<Value> r = s.emit("graph.upsample_nearest2d", {*x}, attrs);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// The float scales of input |i|, known at import time.
FailureOr<std::vector<double>> floatsInput(ImportState &s, unsigned i) {
  const Tensor *t = s.constInput(i);
  if (!t || !isFloatType(t->type)) {
    (void)s.error("scales (input " + Twine(i) +
                  ") must be a float tensor known at import time");
    return failure();
  }
  return t->f;
}

LogicalResult resize(ImportState &s) {
  if (failed(s.onlyAttrs({"mode", "coordinate_transformation_mode",
                          "nearest_mode", "cubic_coeff_a", "exclude_outside",
                          "extrapolation_value", "antialias",
                          "keep_aspect_ratio_policy"})) ||
      failed(requireString(s, "mode", "nearest", "nearest")))
    return failure();
  // Opset 10 has neither attribute and maps asymmetrically with floor.
  if (s.opset >= 11 &&
      (failed(requireString(s, "coordinate_transformation_mode", "half_pixel",
                            "asymmetric")) ||
       failed(requireString(s, "nearest_mode", "round_prefer_floor",
                            "floor"))))
    return failure();
  if (s.intAttr("antialias", 0) != 0)
    return s.error("antialias 1 is not supported");
  if (failed(requireString(s, "keep_aspect_ratio_policy", "stretch",
                           "stretch")))
    return failure();
  // Opset 10: X, scales. Opset 11+: X, roi, scales, sizes (roi only
  // matters for tf_crop_and_resize).
  unsigned scalesAt = s.opset < 11 ? 1 : 2;
  const Tensor *scales = s.constInput(scalesAt);
  if (scales && scales->numel() > 0) {
    auto v = floatsInput(s, scalesAt);
    return failed(v) ? failure() : emitNearest(s, *v, {});
  }
  if (s.opset >= 11 && s.hasInput(3)) {
    auto sizes = s.intsInput(3, "sizes");
    return failed(sizes) ? failure() : emitNearest(s, {}, *sizes);
  }
  return s.error("needs scales or sizes known at import time");
}

LogicalResult upsample(ImportState &s) {
  if (failed(s.onlyAttrs({"mode", "scales"})) ||
      failed(requireString(s, "mode", "nearest", "nearest")))
    return failure();
  // Opset 7-8: a `scales` attribute; opset 9: input 1.
  if (const Attribute *a = s.node->attr("scales"))
    return emitNearest(s, a->floats, {});
  auto v = floatsInput(s, 1);
  return failed(v) ? failure() : emitNearest(s, *v, {});
}

} // namespace

void registerResizeOps(OpTable &t) {
  t["Resize"] = resize;
  t["Upsample"] = upsample;
}

} // namespace ampc::onnx
