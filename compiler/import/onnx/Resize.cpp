//===- Resize.cpp - Resize and Upsample as graph.upsample_*2d -------------===//
//
// What torch.onnx writes for F.interpolate:
// - mode="nearest": Resize with mode=nearest,
//   coordinate_transformation_mode=asymmetric and nearest_mode=floor (opset
//   11+), Resize with mode=nearest (opset 10), or Upsample (opset 7-9). All
//   read output row i from input row floor(i / scale):
//   graph.upsample_nearest2d.
// - mode="bilinear": Resize with mode=linear and
//   coordinate_transformation_mode=pytorch_half_pixel (align_corners=False)
//   or align_corners (align_corners=True), opset 11+:
//   graph.upsample_bilinear2d. half_pixel maps as align_corners=False
//   everywhere; pytorch_half_pixel too, but to an output size of 1 from a
//   larger input, where ONNX reads row 0 and PyTorch's kernel the middle:
//   that case is refused rather than imported either way.
// PyTorch's kernels copy an axis whose size a scale keeps (and nearest reads
// i / 2 on one it doubles) whatever the scale; ONNX maps by the scale. A
// scale other than 1 (2) that keeps (doubles) a size is refused too.
// Scales (or sizes) must be known at import time and leave N and C alone.
// Any other mode or coordinate mapping is an error naming the attribute.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include <cstdio>

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

// How F.interpolate's mode is spelled in the file.
struct Mode {
  bool bilinear = false, alignCorners = false;
  bool halfPixel = false; // ONNX's half_pixel, not pytorch_half_pixel
};

// Emits upsample_nearest2d (or upsample_bilinear2d, |mode|) of input 0
// from float |scales| [1, 1, sh, sw] or, when empty, integer |sizes|
// [N, C, OH, OW].
LogicalResult emitResample(ImportState &s, ArrayRef<double> scales,
                           ArrayRef<int64_t> sizes, Mode mode = {}) {
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
  if (mode.alignCorners)
    attrs.push_back(s.attr("align_corners", s.b.getBoolAttr(true)));
  FailureOr<Value> r = s.emit(mode.bilinear ? "graph.upsample_bilinear2d"
                                            : "graph.upsample_nearest2d",
                              {*x}, attrs);
  if (failed(r))
    return failure();
  ArrayRef<int64_t> outShape = shapeOf(*r);
  for (int k = 2; k < 4; ++k) {
    int64_t in = shape[k], out = outShape[k];
    if (mode.bilinear && !mode.alignCorners && !mode.halfPixel && out == 1 &&
        in > 1)
      return s.error("pytorch_half_pixel to an output size of 1 is not "
                     "supported (ONNX reads the first row there, PyTorch's "
                     "kernel the middle)");
    if (scales.empty())
      continue;
    double scale = scales[size_t(k)];
    // align_corners maps by the sizes alone, in ONNX as in PyTorch.
    if ((out == in && scale != 1.0 && !mode.alignCorners) ||
        (!mode.bilinear && out == 2 * in && scale != 2.0)) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%g", scale);
      return s.error(
          "scale " + std::string(shown) + " " +
          (out == in ? "keeps" : "doubles") + " size " + Twine(in) +
          ": ONNX maps by the scale there, PyTorch's kernel " +
          (out == in ? "copies" : "reads i / 2") + " (not supported)");
    }
  }
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

// F.interpolate's bilinear mode from a linear Resize's coordinate mapping.
FailureOr<Mode> bilinearMode(ImportState &s) {
  // Opset 10 maps asymmetrically, which no PyTorch mode does.
  if (s.opset < 11) {
    (void)s.error("mode linear below opset 11 maps asymmetrically (not "
                  "supported: F.interpolate's mode=\"bilinear\" exports at "
                  "opset 11 and later)");
    return failure();
  }
  std::string map =
      s.stringAttr("coordinate_transformation_mode", "half_pixel");
  Mode m;
  m.bilinear = true;
  m.alignCorners = map == "align_corners";
  m.halfPixel = map == "half_pixel";
  if (map != "pytorch_half_pixel" && !m.halfPixel && !m.alignCorners) {
    (void)s.error("coordinate_transformation_mode " + map +
                  " is not supported with mode linear (only "
                  "pytorch_half_pixel, half_pixel or align_corners: "
                  "F.interpolate's mode=\"bilinear\")");
    return failure();
  }
  return m;
}

LogicalResult resize(ImportState &s) {
  if (failed(s.onlyAttrs({"mode", "coordinate_transformation_mode",
                          "nearest_mode", "cubic_coeff_a", "exclude_outside",
                          "extrapolation_value", "antialias",
                          "keep_aspect_ratio_policy"})))
    return failure();
  Mode mode;
  std::string name = s.stringAttr("mode", "nearest");
  if (name == "linear") {
    FailureOr<Mode> m = bilinearMode(s);
    if (failed(m))
      return failure();
    mode = *m;
  } else if (name != "nearest") {
    return s.error("mode " + name +
                   " is not supported (only nearest and linear: "
                   "F.interpolate's mode=\"nearest\" and \"bilinear\")");
  } else if (s.opset >= 11 &&
             // Opset 10 has neither attribute and maps asymmetrically with
             // floor.
             (failed(requireString(s, "coordinate_transformation_mode",
                                   "half_pixel", "asymmetric")) ||
              failed(requireString(s, "nearest_mode", "round_prefer_floor",
                                   "floor")))) {
    return failure();
  }
  if (s.intAttr("antialias", 0) != 0)
    return s.error("antialias 1 is not supported");
  std::string policy = s.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return s.error("keep_aspect_ratio_policy " + policy +
                   " is not supported (only stretch)");
  // Opset 10: X, scales. Opset 11+: X, roi, scales, sizes (roi only
  // matters for tf_crop_and_resize).
  unsigned scalesAt = s.opset < 11 ? 1 : 2;
  const Tensor *scales = s.constInput(scalesAt);
  if (scales && scales->numel() > 0) {
    auto v = floatsInput(s, scalesAt);
    return failed(v) ? failure() : emitResample(s, *v, {}, mode);
  }
  if (s.opset >= 11 && s.hasInput(3)) {
    auto sizes = s.intsInput(3, "sizes");
    return failed(sizes) ? failure() : emitResample(s, {}, *sizes, mode);
  }
  return s.error("needs scales or sizes known at import time");
}

LogicalResult upsample(ImportState &s) {
  if (failed(s.onlyAttrs({"mode", "scales"})) ||
      failed(requireString(s, "mode", "nearest", "nearest")))
    return failure();
  // Opset 7-8: a `scales` attribute; opset 9: input 1.
  if (const Attribute *a = s.node->attr("scales"))
    return emitResample(s, a->floats, {});
  auto v = floatsInput(s, 1);
  return failed(v) ? failure() : emitResample(s, *v, {});
}

} // namespace

void registerResizeOps(OpTable &t) {
  t["Resize"] = resize;
  t["Upsample"] = upsample;
}

} // namespace ampc::onnx
