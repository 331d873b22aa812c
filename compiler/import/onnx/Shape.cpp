//===- Shape.cpp - Shape ops, Constant, Gather, and their folding
//-----------===//
//
// Shapes are static, so Shape and the integer chains built on it (Gather,
// Concat, Unsqueeze, Cast, arithmetic) fold to host tensors here; Reshape
// then reads its target shape from them.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

// The output shape of the node: a reshape of a graph value, or of a
// constant (folded).
LogicalResult reshapeTo(ImportState &s, ArrayRef<int64_t> shape) {
  int64_t n = checkedNumel(std::vector<int64_t>(shape.begin(), shape.end()));
  if (n < 0)
    return s.error("shape " + shapeString(shape) +
                   " has a negative dimension or more than 2^62 elements");
  if (const Tensor *c = s.constInput(0)) {
    if (n != c->numel())
      return s.error("cannot reshape " + shapeString(c->shape) + " to " +
                     shapeString(shape));
    Tensor r = *c;
    r.shape.assign(shape.begin(), shape.end());
    s.setConst(s.node->outputs[0], std::move(r));
    return success();
  }
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t have = 1;
  for (int64_t d : shapeOf(*x))
    have *= d;
  if (have != n)
    return s.error("cannot reshape " + shapeString(shapeOf(*x)) + " to " +
                   shapeString(shape));
  auto type = RankedTensorType::get(shape, elementTypeOf(*x));
  if (type == x->getType()) {
    s.result(0, *x);
    return success();
  }
  FailureOr<Value> r = s.emit("graph.reshape", {*x}, {}, type);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// The shape of input 0, graph value or constant.
FailureOr<SmallVector<int64_t>> inputShape(ImportState &s) {
  if (const Tensor *c = s.constInput(0))
    return SmallVector<int64_t>(c->shape.begin(), c->shape.end());
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  return SmallVector<int64_t>(shapeOf(*x));
}

LogicalResult reshape(ImportState &s) {
  if (failed(s.onlyAttrs({"allowzero"})))
    return failure();
  auto in = inputShape(s);
  auto target = s.intsInput(1, "the shape");
  if (failed(in) || failed(target))
    return failure();
  bool allowZero = s.intAttr("allowzero", 0);
  SmallVector<int64_t> shape;
  int64_t known = 1, inferred = -1, total = 1;
  for (int64_t d : *in)
    total *= d;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (d == 0 && !allowZero) {
      if (i >= in->size())
        return s.error("shape entry 0 at " + Twine(i) + " has no input dim");
      d = (*in)[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return s.error("the shape has two -1 entries");
      inferred = int64_t(i);
    } else if (d < -1) {
      return s.error("shape entry " + Twine(d) + " at " + Twine(i) +
                     " is negative");
    } else {
      if (d != 0 && known > (int64_t(1) << 62) / d)
        return s.error("shape " + shapeString(*target) +
                       " has more than 2^62 elements");
      known *= d;
    }
    shape.push_back(d);
  }
  if (inferred >= 0) {
    if (known == 0 || total % known)
      return s.error("cannot reshape " + shapeString(*in) + " to " +
                     shapeString(*target));
    shape[inferred] = total / known;
  }
  return reshapeTo(s, shape);
}

LogicalResult flatten(ImportState &s) {
  if (failed(s.onlyAttrs({"axis"})))
    return failure();
  auto in = inputShape(s);
  if (failed(in))
    return failure();
  int64_t rank = int64_t(in->size());
  int64_t axis = s.intAttr("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return s.error("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= (*in)[i];
  return reshapeTo(s, {outer, inner});
}

LogicalResult unsqueeze(ImportState &s) {
  auto in = inputShape(s);
  if (failed(in))
    return failure();
  std::vector<int64_t> axes;
  if (auto a = s.intsAttr("axes"))
    axes = *a;
  else {
    auto a2 = s.intsInput(1, "axes");
    if (failed(a2))
      return failure();
    axes = *a2;
  }
  int64_t rank = int64_t(in->size() + axes.size());
  std::vector<bool> isNew(rank, false);
  for (int64_t a : axes) {
    auto n = s.normAxis(a, rank);
    if (failed(n))
      return failure();
    if (isNew[*n])
      return s.error("axis " + Twine(a) + " is given twice");
    isNew[*n] = true;
  }
  SmallVector<int64_t> shape;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(isNew[i] ? 1 : (*in)[k++]);
  return reshapeTo(s, shape);
}

LogicalResult squeeze(ImportState &s) {
  auto in = inputShape(s);
  if (failed(in))
    return failure();
  int64_t rank = int64_t(in->size());
  std::vector<bool> drop(rank, false);
  std::optional<std::vector<int64_t>> axes = s.intsAttr("axes");
  if (!axes && s.hasInput(1)) {
    auto a = s.intsInput(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  if (axes) {
    for (int64_t a : *axes) {
      auto n = s.normAxis(a, rank);
      if (failed(n))
        return failure();
      if ((*in)[*n] != 1)
        return s.error("cannot squeeze axis " + Twine(a) + " of size " +
                       Twine((*in)[*n]));
      drop[*n] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = (*in)[i] == 1;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      shape.push_back((*in)[i]);
  return reshapeTo(s, shape);
}

LogicalResult transpose(ImportState &s) {
  if (failed(s.onlyAttrs({"perm"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t rank = int64_t(shapeOf(*x).size());
  std::vector<int64_t> perm;
  if (auto p = s.intsAttr("perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  FailureOr<Value> r = s.emit("graph.transpose", {*x},
                              {s.attr("perm", s.b.getDenseI64ArrayAttr(perm))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult shape(ImportState &s) {
  auto in = inputShape(s);
  if (failed(in))
    return failure();
  int64_t rank = int64_t(in->size());
  int64_t start = s.intAttr("start", 0), end = s.intAttr("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  Tensor t;
  t.type = kInt64;
  for (int64_t i = start; i < end; ++i)
    t.i.push_back((*in)[i]);
  t.shape = {int64_t(t.i.size())};
  s.setConst(s.node->outputs[0], std::move(t));
  return success();
}

LogicalResult constant(ImportState &s) {
  if (s.node->attrs.size() != 1)
    return s.error("expects exactly one value attribute");
  const Attribute &a = s.node->attrs[0];
  Tensor t;
  if (a.name == "value" && a.kind == Attribute::TensorKind) {
    t = *a.t;
  } else if (a.name == "value_float") {
    t.type = kFloat;
    t.f = {a.f};
  } else if (a.name == "value_int") {
    t.type = kInt64;
    t.i = {a.i};
  } else if (a.name == "value_floats") {
    t.type = kFloat;
    t.f = a.floats;
    t.shape = {int64_t(t.f.size())};
  } else if (a.name == "value_ints") {
    t.type = kInt64;
    t.i = a.ints;
    t.shape = {int64_t(t.i.size())};
  } else {
    return s.error("attribute '" + a.name + "' is not supported");
  }
  s.setConst(s.node->outputs[0], std::move(t));
  return success();
}

// Gather of constants (shape chains), of any rank.
LogicalResult foldGather(ImportState &s, const Tensor &data, const Tensor &idx,
                         int64_t axis) {
  Tensor r;
  r.type = data.type;
  r.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  r.shape.insert(r.shape.end(), idx.shape.begin(), idx.shape.end());
  r.shape.insert(r.shape.end(), data.shape.begin() + axis + 1,
                 data.shape.end());
  int64_t outer = 1, inner = 1, n = data.shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= data.shape[i];
  for (size_t i = axis + 1; i < data.shape.size(); ++i)
    inner *= data.shape[i];
  bool isF = isFloatType(data.type);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : idx.i) {
      if (j < 0)
        j += n;
      if (j < 0 || j >= n)
        return s.error("index " + Twine(j) + " is out of range");
      for (int64_t k = 0; k < inner; ++k) {
        int64_t src = (o * n + j) * inner + k;
        if (isF)
          r.f.push_back(data.f[src]);
        else
          r.i.push_back(data.i[src]);
      }
    }
  s.setConst(s.node->outputs[0], std::move(r));
  return success();
}

LogicalResult gather(ImportState &s) {
  if (failed(s.onlyAttrs({"axis"})))
    return failure();
  int64_t axis = s.intAttr("axis", 0);
  const Tensor *data = s.constInput(0), *idx = s.constInput(1);
  if (idx && isFloatType(idx->type))
    return s.error("indices must be integers");
  if (data && idx) {
    auto a = s.normAxis(axis, int64_t(data->shape.size()));
    if (failed(a))
      return failure();
    return foldGather(s, *data, *idx, *a);
  }
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  auto a = s.normAxis(axis, int64_t(shapeOf(*x).size()));
  if (failed(a))
    return failure();
  // Constant indices: one slice per index, concatenated, then reshaped to
  // data.shape[:axis] + indices.shape + data.shape[axis+1:].
  if (idx) {
    ArrayRef<int64_t> in = shapeOf(*x);
    if (idx->numel() > 256)
      return s.error("more than 256 constant indices are not supported");
    if (idx->numel() == 0)
      return s.error("no indices (an empty gather) is not supported");
    SmallVector<Value> parts;
    for (int64_t j : idx->i) {
      if (j < 0)
        j += in[*a];
      if (j < 0 || j >= in[*a])
        return s.error("index out of range");
      SmallVector<int64_t> starts(in.size(), 0), limits(in);
      starts[*a] = j;
      limits[*a] = j + 1;
      FailureOr<Value> sl =
          s.emit("graph.slice", {*x},
                 {s.attr("starts", s.b.getDenseI64ArrayAttr(starts)),
                  s.attr("limits", s.b.getDenseI64ArrayAttr(limits))});
      if (failed(sl))
        return failure();
      parts.push_back(*sl);
    }
    FailureOr<Value> joined = parts.front();
    if (parts.size() > 1)
      joined = s.emit("graph.concat", parts,
                      {s.attr("axis", s.b.getI64IntegerAttr(*a))});
    if (failed(joined))
      return failure();
    SmallVector<int64_t> shape(in.begin(), in.begin() + *a);
    shape.append(idx->shape.begin(), idx->shape.end());
    shape.append(in.begin() + *a + 1, in.end());
    auto type = RankedTensorType::get(shape, elementTypeOf(*x));
    FailureOr<Value> r = joined;
    if (type != joined->getType())
      r = s.emit("graph.reshape", {*joined}, {}, type);
    if (failed(r))
      return failure();
    s.result(0, *r);
    return success();
  }
  // Rows of a 2-D table: an embedding lookup.
  FailureOr<Value> ids = s.input(1);
  if (failed(ids))
    return failure();
  if (*a != 0 || shapeOf(*x).size() != 2 || !isa<FloatType>(elementTypeOf(*x)))
    return s.error("only an embedding lookup (float 2-D data, axis 0) or "
                   "constant indices are supported");
  FailureOr<Value> r = s.emit("graph.embedding", {*ids, *x});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult concat(ImportState &s) {
  if (failed(s.onlyAttrs({"axis"})))
    return failure();
  int64_t axis = s.intAttr("axis", 0);
  bool allConst = true;
  for (unsigned i = 0; i < s.node->inputs.size(); ++i)
    allConst &= s.constInput(i) != nullptr;
  if (allConst) {
    // Shape chains: 1-D integer lists.
    Tensor r;
    r.type = s.constInput(0)->type;
    for (unsigned i = 0; i < s.node->inputs.size(); ++i) {
      const Tensor *t = s.constInput(i);
      if (t->shape.size() != 1)
        return s.error("only 1-D constant operands fold");
      r.i.insert(r.i.end(), t->i.begin(), t->i.end());
      r.f.insert(r.f.end(), t->f.begin(), t->f.end());
    }
    r.shape = {int64_t(isFloatType(r.type) ? r.f.size() : r.i.size())};
    s.setConst(s.node->outputs[0], std::move(r));
    return success();
  }
  SmallVector<Value> vals;
  for (unsigned i = 0; i < s.node->inputs.size(); ++i) {
    FailureOr<Value> v = s.input(i);
    if (failed(v))
      return failure();
    vals.push_back(*v);
  }
  FailureOr<Value> r = s.emit("graph.concat", vals,
                              {s.attr("axis", s.b.getI64IntegerAttr(axis))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerShapeOps(OpTable &t) {
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Unsqueeze"] = unsqueeze;
  t["Squeeze"] = squeeze;
  t["Transpose"] = transpose;
  t["Shape"] = shape;
  t["Constant"] = constant;
  t["Gather"] = gather;
  t["Concat"] = concat;
}

} // namespace ampc::onnx
