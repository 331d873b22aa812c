//===- Slice.cpp - Slice, Split, Expand, ConstantOfShape, Range
//-------------===//
//
// Slice bounds, split sizes and target shapes must be known at import time
// (they are in exported models); ConstantOfShape and Range fold to
// constants.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include "llvm/Support/FormatVariadic.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>

using namespace mlir;

namespace ampc::onnx {
namespace {

LogicalResult slice(ImportState &s) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (s.opset < 10) {
    starts = s.intsAttr("starts").value_or(std::vector<int64_t>{});
    ends = s.intsAttr("ends").value_or(std::vector<int64_t>{});
    axes = s.intsAttr("axes").value_or(std::vector<int64_t>{});
  } else {
    auto st = s.intsInput(1, "starts"), en = s.intsInput(2, "ends");
    if (failed(st) || failed(en))
      return failure();
    starts = *st;
    ends = *en;
    if (s.hasInput(3)) {
      auto a = s.intsInput(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (s.hasInput(4)) {
      auto a = s.intsInput(4, "steps");
      if (failed(a))
        return failure();
      steps = *a;
    }
  }
  const Tensor *c = s.constInput(0);
  SmallVector<int64_t> shape;
  FailureOr<Value> x = Value();
  if (c) {
    shape.assign(c->shape.begin(), c->shape.end());
  } else {
    x = s.input(0);
    if (failed(x))
      return failure();
    shape.assign(shapeOf(*x).begin(), shapeOf(*x).end());
  }
  int64_t rank = int64_t(shape.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return s.error("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> lo(rank, 0), hi(shape), st(rank, 1);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank)
      return s.error("axis " + Twine(axes[k]) + " is out of range");
    if (steps[k] <= 0)
      return s.error("negative or zero steps are not supported");
    int64_t dim = shape[a];
    auto clampIdx = [&](int64_t i) {
      if (i < 0)
        i += dim;
      return std::clamp<int64_t>(i, 0, dim);
    };
    lo[a] = clampIdx(starts[k]);
    hi[a] = clampIdx(ends[k]);
    st[a] = steps[k];
    // An empty slice of a known tensor is a known empty tensor (shape
    // chains slice shapes); a graph value cannot be empty.
    if (hi[a] <= lo[a] && !c)
      return s.error("the slice of axis " + Twine(a) +
                     " is empty (zero-size tensors are not supported)");
    hi[a] = std::max(hi[a], lo[a]);
  }
  if (c) { // Constants (shape chains, mask buffers) fold.
    Tensor r;
    r.type = c->type;
    for (int64_t a = 0; a < rank; ++a)
      r.shape.push_back((hi[a] - lo[a] + st[a] - 1) / st[a]);
    for (int64_t e = 0; e < r.numel(); ++e) {
      int64_t src = 0, rest = e;
      SmallVector<int64_t> coord(rank);
      for (int64_t a = rank - 1; a >= 0; --a) {
        coord[a] = rest % r.shape[a];
        rest /= r.shape[a];
      }
      for (int64_t a = 0; a < rank; ++a)
        src = src * shape[a] + lo[a] + coord[a] * st[a];
      if (isFloatType(c->type))
        r.f.push_back(c->f[src]);
      else
        r.i.push_back(c->i[src]);
    }
    s.setConst(s.node->outputs[0], std::move(r));
    return success();
  }
  SmallVector<NamedAttribute> attrs = {
      s.attr("starts", s.b.getDenseI64ArrayAttr(lo)),
      s.attr("limits", s.b.getDenseI64ArrayAttr(hi))};
  if (llvm::any_of(st, [](int64_t v) { return v != 1; }))
    attrs.push_back(s.attr("strides", s.b.getDenseI64ArrayAttr(st)));
  FailureOr<Value> r = s.emit("graph.slice", {*x}, attrs);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult split(ImportState &s) {
  if (failed(s.onlyAttrs({"axis", "split", "num_outputs"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  int64_t rank = int64_t(shape.size());
  int64_t axis = s.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return s.error("axis out of range");
  std::vector<int64_t> sizes;
  if (auto a = s.intsAttr("split")) {
    sizes = *a;
  } else if (s.hasInput(1)) {
    auto a = s.intsInput(1, "split");
    if (failed(a))
      return failure();
    sizes = *a;
  } else {
    int64_t n = int64_t(s.node->outputs.size());
    int64_t chunk = (shape[axis] + n - 1) / n; // opset 18: last one smaller
    for (int64_t i = 0, left = shape[axis]; i < n; ++i, left -= chunk)
      sizes.push_back(std::min(chunk, left));
  }
  if (sizes.size() != s.node->outputs.size())
    return s.error("has " + Twine(s.node->outputs.size()) + " outputs but " +
                   Twine(sizes.size()) + " split sizes");
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] <= 0)
      return s.error("zero-size splits are not supported");
    FailureOr<Value> r = sliceAxis(s, *x, axis, start, start + sizes[i]);
    if (failed(r))
      return failure();
    s.result(unsigned(i), *r);
    start += sizes[i];
  }
  if (start != shape[axis])
    return s.error("split sizes sum to " + Twine(start) + ", the axis has " +
                   Twine(shape[axis]));
  return success();
}

LogicalResult expand(ImportState &s) {
  FailureOr<Value> x = s.input(0);
  auto target = s.intsInput(1, "the shape");
  if (failed(x) || failed(target))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  size_t rank = std::max(in.size(), target->size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
    int64_t b =
        i + target->size() >= rank ? (*target)[i + target->size() - rank] : 1;
    if (a != b && a != 1 && b != 1)
      return s.error("cannot expand dimension " + Twine(a) + " to " + Twine(b));
    out[i] = a == 1 ? b : a;
  }
  std::vector<int64_t> outShape(out.begin(), out.end());
  if (checkedNumel(outShape) < 0)
    return s.error("cannot expand to " + shapeString(outShape) +
                   ": a negative dimension or more than 2^62 elements");
  auto type = RankedTensorType::get(out, elementTypeOf(*x));
  if (type == x->getType()) {
    s.result(0, *x);
    return success();
  }
  FailureOr<Value> r = s.emit("graph.broadcast_to", {*x}, {}, type);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult constantOfShape(ImportState &s) {
  auto shape = s.intsInput(0, "the shape");
  if (failed(shape))
    return failure();
  Tensor t;
  t.type = kFloat;
  double fv = 0;
  int64_t iv = 0;
  if (const Attribute *a = s.node->attr("value")) {
    if (a->kind != Attribute::TensorKind || a->t->numel() != 1)
      return s.error("value must be a one-element tensor");
    t.type = a->t->type;
    if (isFloatType(t.type))
      fv = a->t->f[0];
    else
      iv = a->t->i[0];
  }
  t.shape = *shape;
  int64_t n = checkedNumel(t.shape);
  if (n < 0)
    checkFoldShape(t.shape); // negative or past 2^62: the error
  if (n > kMaxFoldElements) { // torch.zeros_like of a large input
    FailureOr<Value> v =
        s.splat(t.type, t.shape, isFloatType(t.type) ? fv : double(iv));
    if (failed(v))
      return failure();
    s.result(0, *v);
    return success();
  }
  if (isFloatType(t.type))
    t.f.assign(size_t(t.numel()), fv);
  else
    t.i.assign(size_t(t.numel()), iv);
  s.setConst(s.node->outputs[0], std::move(t));
  return success();
}

LogicalResult range(ImportState &s) {
  const Tensor *c[3] = {s.constInput(0), s.constInput(1), s.constInput(2)};
  if (!c[0] || !c[1] || !c[2])
    return s.error("start, limit and delta must be known at import time");
  for (const Tensor *t : c)
    if (t->numel() != 1 || t->type != c[0]->type)
      return s.error("start, limit and delta must be scalars of one type");
  auto at = [](const Tensor *t) {
    return isFloatType(t->type) ? t->f[0] : double(t->i[0]);
  };
  double start = at(c[0]), limit = at(c[1]), delta = at(c[2]);
  if (delta == 0)
    return s.error("delta is 0");
  double count = std::ceil((limit - start) / delta);
  if (!std::isfinite(count))
    return s.error("start, limit and delta give no finite count");
  if (count > double(kMaxFoldElements))
    return s.error("computing it at import time would make " +
                   llvm::formatv("{0:e3}", count) +
                   " elements (at most 2^26)");
  int64_t n = std::max<int64_t>(int64_t(count), 0);
  Tensor t;
  t.type = c[0]->type;
  t.shape = {n};
  for (int64_t i = 0; i < n; ++i) {
    if (isFloatType(t.type))
      t.f.push_back(start + double(i) * delta);
    else
      t.i.push_back(c[0]->i[0] + i * c[2]->i[0]);
  }
  s.setConst(s.node->outputs[0], std::move(t));
  return success();
}

} // namespace

void registerSliceOps(OpTable &t) {
  t["Slice"] = slice;
  t["Split"] = split;
  t["Expand"] = expand;
  t["ConstantOfShape"] = constantOfShape;
  t["Range"] = range;
}

} // namespace ampc::onnx
