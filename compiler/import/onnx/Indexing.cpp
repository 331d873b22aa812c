//===- Indexing.cpp - CumSum, ArgMax, GatherElements, Tile ----------------===//
//
// Each is one graph op, or (Tile) a reshape / broadcast_to / reshape whose
// gradient is the broadcast's sum: torch.cumsum, torch.argmax, torch.gather
// and Tensor.repeat as torch.onnx exports them.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

// |axis| of |x| made non-negative, or an error when out of range.
FailureOr<int64_t> axisOf(ImportState &s, Value x, int64_t axis) {
  return s.normAxis(axis, int64_t(shapeOf(x).size()));
}

LogicalResult cumsum(ImportState &s) {
  if (failed(s.onlyAttrs({"exclusive", "reverse"})))
    return failure();
  if (s.intAttr("exclusive", 0) != 0)
    return s.error("exclusive=1 is not supported (torch.cumsum is "
                   "inclusive)");
  FailureOr<Value> x = s.input(0);
  auto axes = s.intsInput(1, "axis");
  if (failed(x) || failed(axes))
    return failure();
  if (axes->size() != 1)
    return s.error("axis must be one integer");
  FailureOr<int64_t> axis = axisOf(s, *x, (*axes)[0]);
  if (failed(axis))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      s.attr("axis", s.b.getI64IntegerAttr(*axis))};
  if (s.intAttr("reverse", 0) != 0)
    attrs.push_back(s.attr("reverse", s.b.getUnitAttr()));
  FailureOr<Value> r = s.emit("graph.cumsum", {*x}, attrs);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult argmax(ImportState &s) {
  if (failed(s.onlyAttrs({"axis", "keepdims", "select_last_index"})))
    return failure();
  if (s.intAttr("select_last_index", 0) != 0)
    return s.error("select_last_index=1 is not supported (torch.argmax "
                   "returns the first maximum)");
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = axisOf(s, *x, s.intAttr("axis", 0));
  if (failed(axis))
    return failure();
  FailureOr<Value> r = s.emit(
      "graph.argmax", {*x},
      {s.attr("axis", s.b.getI64IntegerAttr(*axis)),
       s.attr("keepdim", s.b.getBoolAttr(s.intAttr("keepdims", 1) != 0))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// GatherElements is torch.gather (graph.gather). Its negative indices
// count from the end; graph.gather's must be in range, so constant indices
// are made non-negative here and graph values are taken as they are.
LogicalResult gatherElements(ImportState &s) {
  if (failed(s.onlyAttrs({"axis"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = axisOf(s, *x, s.intAttr("axis", 0));
  if (failed(axis))
    return failure();
  FailureOr<Value> index = failure();
  if (const Tensor *c = s.constInput(1)) {
    if (isFloatType(c->type))
      return s.error("indices must be integers");
    Tensor t = *c;
    int64_t extent = shapeOf(*x)[size_t(*axis)];
    for (int64_t &i : t.i) {
      if (i < -extent || i >= extent)
        return s.error("index " + Twine(i) + " is outside [-" + Twine(extent) +
                       ", " + Twine(extent) + ") on axis " + Twine(*axis));
      if (i < 0)
        i += extent;
    }
    t.type = kInt64;
    index = s.constantOf(t);
  } else {
    index = s.input(1);
  }
  if (failed(index))
    return failure();
  FailureOr<Value> r = s.emit("graph.gather", {*x, *index},
                              {s.attr("axis", s.b.getI64IntegerAttr(*axis))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Tile(x, repeats): [d0, d1, ...] reshaped to [1, d0, 1, d1, ...],
// broadcast to [r0, d0, r1, d1, ...] and reshaped to [r0 d0, r1 d1, ...].
LogicalResult tile(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> x = s.input(0);
  auto repeats = s.intsInput(1, "repeats");
  if (failed(x) || failed(repeats))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  if (!isa<FloatType>(elementTypeOf(*x)))
    return s.error("tiling integer graph values is not supported");
  if (repeats->size() != in.size())
    return s.error("repeats has " + Twine(repeats->size()) +
                   " entries for an input of rank " + Twine(in.size()));
  SmallVector<int64_t> spread, wide, out;
  std::vector<int64_t> outShape;
  for (size_t k = 0; k < in.size(); ++k) {
    int64_t r = (*repeats)[k];
    if (r < 1)
      return s.error("repeats must be positive, got " + Twine(r));
    if (in[k] > 0 && r > (int64_t(1) << 62) / in[k])
      return s.error("repeats " + Twine(r) + " on a dimension of " +
                     Twine(in[k]) + " pass 2^62 elements");
    spread.append({1, in[k]});
    wide.append({r, in[k]});
    outShape.push_back(r * in[k]);
  }
  if (checkedNumel(outShape) < 0)
    return s.error("tiling to " + shapeString(outShape) +
                   " passes 2^62 elements");
  if (llvm::all_of(*repeats, [](int64_t r) { return r == 1; })) {
    s.result(0, *x);
    return success();
  }
  Type elem = elementTypeOf(*x);
  FailureOr<Value> r =
      s.emit("graph.reshape", {*x}, {}, RankedTensorType::get(spread, elem));
  if (failed(r) ||
      failed(r = s.emit("graph.broadcast_to", {*r}, {},
                        RankedTensorType::get(wide, elem))) ||
      failed(r = s.emit("graph.reshape", {*r}, {},
                        RankedTensorType::get(outShape, elem))))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerIndexingOps(OpTable &t) {
  t["CumSum"] = cumsum;
  t["ArgMax"] = argmax;
  t["GatherElements"] = gatherElements;
  t["Tile"] = tile;
}

} // namespace ampc::onnx
