//===- ImportState.cpp - Values, attributes and op creation
//-----------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

namespace ampc::onnx {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

FailureOr<Value> reshapeTo(ImportState &s, Value x, ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return s.emit("graph.reshape", {x}, {},
                RankedTensorType::get(shape, elementTypeOf(x)));
}

FailureOr<Value> sliceAxis(ImportState &s, Value x, int64_t axis,
                           int64_t start, int64_t limit, int64_t step) {
  ArrayRef<int64_t> shape = shapeOf(x);
  if (start == 0 && limit == shape[size_t(axis)] && step == 1)
    return x;
  SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
      strides(shape.size(), 1);
  starts[axis] = start;
  limits[axis] = limit;
  strides[axis] = step;
  SmallVector<NamedAttribute> attrs = {
      s.attr("starts", s.b.getDenseI64ArrayAttr(starts)),
      s.attr("limits", s.b.getDenseI64ArrayAttr(limits))};
  if (step != 1)
    attrs.push_back(s.attr("strides", s.b.getDenseI64ArrayAttr(strides)));
  return s.emit("graph.slice", {x}, attrs);
}

void checkFoldShape(const std::vector<int64_t> &shape) {
  int64_t n = checkedNumel(shape);
  if (n < 0)
    throw ImportLimit("its result's shape " + shapeString(shape) +
                      " has a negative dimension or more than 2^62 elements");
  if (n > kMaxFoldElements)
    throw ImportLimit("computing it at import time would make a tensor of "
                      "shape " + shapeString(shape) + " (" +
                      std::to_string(n) + " elements; at most 2^26)");
}

Location ImportState::loc() {
  Location fileLoc = FileLineColLoc::get(ctx(), file, 0, 0);
  if (!node)
    return fileLoc;
  std::string name = node->name;
  if (name.empty())
    name = node->outputs.empty() ? node->opType : node->outputs.front();
  return NameLoc::get(StringAttr::get(ctx(), name), fileLoc);
}

Location ImportState::namedLoc(StringRef name) {
  return NameLoc::get(StringAttr::get(ctx(), name),
                      FileLineColLoc::get(ctx(), file, 0, 0));
}

LogicalResult ImportState::error(const Twine &msg) {
  if (!node)
    return emitError(loc()) << msg;
  // Unnamed nodes (ONNX allows them) go by their first output.
  std::string name = node->name;
  if (name.empty() && !node->outputs.empty())
    name = node->outputs.front();
  if (name.empty())
    return emitError(loc()) << "an unnamed " << node->opType
                            << " node: " << msg;
  return emitError(loc()) << "node '" << name << "' (" << node->opType
                          << "): " << msg;
}

void ImportState::setConst(const std::string &name, Tensor t) {
  values.erase(name);
  consts[name] = std::move(t);
}

bool ImportState::has(const std::string &name) const {
  return values.count(name) || consts.count(name) || sequences.count(name);
}

const ImportState::Sequence *
ImportState::sequence(const std::string &name) const {
  auto it = sequences.find(name);
  return it == sequences.end() ? nullptr : &it->second;
}

int32_t ImportState::onnxTypeOfInput(unsigned i) {
  if (const Tensor *t = constInput(i))
    return t->type;
  FailureOr<Value> v = input(i);
  if (failed(v))
    return kUndefined;
  Type e = elementTypeOf(*v);
  if (e.isF32())
    return kFloat;
  if (e.isF16())
    return kFloat16;
  if (e.isBF16())
    return kBfloat16;
  if (e.isInteger(64))
    return kInt64;
  if (e.isInteger(32))
    return kInt32;
  return kUndefined;
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return shapeString(std::vector<int64_t>(shape.begin(), shape.end()));
}

FailureOr<int64_t> ImportState::normAxis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    (void)error("axis " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
    return failure();
  }
  return a;
}

const Tensor *ImportState::constant(const std::string &name) const {
  auto it = consts.find(name);
  return it == consts.end() ? nullptr : &it->second;
}

FailureOr<Type> ImportState::elementType(int32_t t) {
  switch (t) {
  case kFloat:
  case kDouble:
    return Type(b.getF32Type());
  case kFloat16:
    return Type(b.getF16Type());
  case kBfloat16:
    return Type(b.getBF16Type());
  case kInt64:
  case kBool: // graph tensors hold no i1: masks are i64 0/1
    return Type(b.getI64Type());
  case kInt32:
    return Type(b.getI32Type());
  default:
    return failure();
  }
}

Value ImportState::constantOf(const Tensor &t) {
  Type elem = *elementType(t.type);
  auto type = RankedTensorType::get(t.shape, elem);
  DenseElementsAttr value;
  if (isFloatType(t.type)) {
    SmallVector<APFloat> vals;
    for (double d : t.f) {
      APFloat f(d);
      bool lost;
      f.convert(cast<FloatType>(elem).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(f);
    }
    value = DenseElementsAttr::get(type, vals);
  } else {
    unsigned width = elem.getIntOrFloatBitWidth();
    SmallVector<APInt> vals;
    for (int64_t i : t.i)
      vals.push_back(APInt(width, uint64_t(i), /*isSigned=*/true));
    value = DenseElementsAttr::get(type, vals);
  }
  OperationState st(loc(), "graph.constant");
  st.addAttribute("value", value);
  st.addTypes(type);
  return b.create(st)->getResult(0);
}

FailureOr<Value> ImportState::splat(int32_t onnxType,
                                    const std::vector<int64_t> &shape,
                                    double v) {
  FailureOr<Type> elem = elementType(onnxType);
  if (failed(elem))
    return failure();
  auto type = RankedTensorType::get(shape, *elem);
  DenseElementsAttr value;
  if (auto f = dyn_cast<FloatType>(*elem)) {
    APFloat x(v);
    bool lost;
    x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    value = DenseElementsAttr::get(type, x);
  } else {
    value = DenseElementsAttr::get(
        type, APInt(elem->getIntOrFloatBitWidth(), uint64_t(int64_t(v)),
                    /*isSigned=*/true));
  }
  OperationState st(loc(), "graph.constant");
  st.addAttribute("value", value);
  st.addTypes(type);
  return b.create(st)->getResult(0);
}

FailureOr<Value> ImportState::get(const std::string &name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto c = consts.find(name);
  if (c == consts.end() && sequences.count(name)) {
    (void)error("input '" + name +
                "' is a sequence (SplitToSequence); only SequenceAt reads "
                "sequences here");
    return failure();
  }
  if (c == consts.end()) {
    (void)error("input '" + name +
                "' is not produced by any node, "
                "initializer or graph input");
    return failure();
  }
  if (failed(elementType(c->second.type))) {
    (void)error(std::string("constant '") + name + "' has type " +
                dataTypeName(c->second.type) +
                ", which graph tensors cannot hold (f32, f16, bf16, i32, i64)");
    return failure();
  }
  Value v = constantOf(c->second);
  values[name] = v;
  return v;
}

bool ImportState::hasInput(unsigned i) const {
  return i < node->inputs.size() && !node->inputs[i].empty();
}

FailureOr<Value> ImportState::input(unsigned i) {
  if (!hasInput(i)) {
    (void)error("input " + Twine(i) + " is missing");
    return failure();
  }
  return get(node->inputs[i]);
}

const Tensor *ImportState::constInput(unsigned i) const {
  return hasInput(i) ? constant(node->inputs[i]) : nullptr;
}

FailureOr<std::vector<int64_t>> ImportState::intsInput(unsigned i,
                                                       StringRef what) {
  const Tensor *t = constInput(i);
  if (!t || isFloatType(t->type)) {
    (void)error(Twine(what) + " (input " + Twine(i) +
                ") must be an integer tensor known at import time");
    return failure();
  }
  return t->i;
}

// The node's attribute |name| when it has |kind|; one of another kind is
// remembered for Importer's check after the node (LeakyRelu's alpha given
// as an int had silently become the default).
const Attribute *ImportState::attrOfKind(StringRef name, int kind,
                                         const char *kindName) const {
  const Attribute *a = node->attr(name.str());
  if (!a || a->kind == kind)
    return a;
  if (attrKindError.empty())
    attrKindError = ("attribute '" + name + "' must be " + kindName).str();
  return nullptr;
}

int64_t ImportState::intAttr(StringRef name, int64_t dflt) const {
  const Attribute *a = attrOfKind(name, Attribute::Int, "an int");
  return a ? a->i : dflt;
}
double ImportState::floatAttr(StringRef name, double dflt) const {
  const Attribute *a = attrOfKind(name, Attribute::Float, "a float");
  return a ? a->f : dflt;
}
std::string ImportState::stringAttr(StringRef name, StringRef dflt) const {
  const Attribute *a = attrOfKind(name, Attribute::String, "a string");
  return a ? a->s : dflt.str();
}
std::optional<std::vector<int64_t>>
ImportState::intsAttr(StringRef name) const {
  const Attribute *a = attrOfKind(name, Attribute::Ints, "a list of ints");
  if (!a)
    return std::nullopt;
  return a->ints;
}

LogicalResult ImportState::onlyAttrs(std::initializer_list<StringRef> known) {
  for (const Attribute &a : node->attrs)
    if (llvm::find(known, StringRef(a.name)) == known.end())
      return error("attribute '" + a.name + "' is not supported");
  return success();
}

FailureOr<Value> ImportState::emit(StringRef opName, ValueRange operands,
                                   ArrayRef<NamedAttribute> attrs,
                                   Type resultType) {
  OperationState st(loc(), opName);
  st.addOperands(operands);
  st.addAttributes(attrs);
  st.addTypes(resultType ? resultType
                         : Type(RankedTensorType::get({}, b.getF32Type())));
  Operation *op = b.create(st);
  if (resultType)
    return op->getResult(0);
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  SmallVector<Type> types;
  if (!infer ||
      failed(infer.inferReturnTypes(
          ctx(), op->getLoc(), op->getOperands(), op->getAttrDictionary(),
          op->getPropertiesStorage(), op->getRegions(), types)) ||
      types.size() != 1) {
    op->erase();
    (void)error("cannot be imported as " + opName + " (see the error above)");
    return failure();
  }
  op->getResult(0).setType(types[0]);
  return op->getResult(0);
}

void ImportState::indexGraph(const std::vector<Node> &nodes,
                             const std::vector<ValueInfo> &outputs) {
  producers.clear();
  uses.clear();
  for (const Node &n : nodes) {
    for (const std::string &o : n.outputs)
      producers[o] = &n;
    for (const std::string &in : n.inputs)
      ++uses[in];
  }
  for (const ValueInfo &o : outputs)
    ++uses[o.name];
}

const Node *ImportState::producerOf(const std::string &name) const {
  auto it = producers.find(name);
  return it == producers.end() ? nullptr : it->second;
}

int ImportState::usesOf(const std::string &name) const {
  auto it = uses.find(name);
  return it == uses.end() ? 0 : it->second;
}

void ImportState::eraseUnused(const std::vector<std::string> &names) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::string &name : names) {
      auto it = values.find(name);
      if (it == values.end())
        continue;
      Operation *op = it->second.getDefiningOp();
      if (!op || !op->use_empty())
        continue;
      values.erase(it);
      op->erase();
      changed = true;
    }
  }
}

} // namespace ampc::onnx
