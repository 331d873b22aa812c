//===- LossIndexShapes.cpp - Shapes of nll/bce losses, argmax, gather... --===//
//
// Shape inference and verifiers of nll_loss, binary_cross_entropy_with_logits,
// argmax, gather and cumsum and of their backward ops, kept apart from
// GraphShapes.cpp so that these ops arrive as one addition. The messages
// name the shapes involved, as in GraphShapes.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

using Types = SmallVectorImpl<Type>;
using Loc = std::optional<Location>;

bool validReduction(StringRef r) {
  return r == "mean" || r == "sum" || r == "none";
}

LogicalResult checkReduction(Loc loc, StringRef op, StringRef r) {
  if (validReduction(r))
    return success();
  return fail(loc, op + " reduction must be \"mean\", \"sum\" or \"none\", "
                        "got \"" + r + "\"");
}

// The labels of a class-index loss: the input's shape without the class
// axis (classes last, as graph.cross_entropy).
LogicalResult checkLabels(Loc loc, StringRef op, RankedTensorType input,
                          RankedTensorType labels) {
  if (input.getRank() < 1 || input.getShape().drop_back() != labels.getShape())
    return fail(loc, op + " labels " + shapeStr(labels.getShape()) +
                         " must be the input " + shapeStr(input.getShape()) +
                         " without the class axis (classes are last)");
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// nll_loss
//===----------------------------------------------------------------------===//

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                          Types &types) {
  auto x = tensorOf(a.getInput()), y = tensorOf(a.getLabels());
  if (failed(checkLabels(loc, "nll_loss", x, y)) ||
      failed(checkReduction(loc, "nll_loss", a.getReduction())))
    return failure();
  types.push_back(a.getReduction() == "none"
                      ? RankedTensorType::get(y.getShape(), x.getElementType())
                      : RankedTensorType::get({}, x.getElementType()));
  return success();
}

LogicalResult NllLossBackwardOp::verify() {
  auto dx = tensorOf(getDinput()), y = tensorOf(getLabels()),
       g = tensorOf(getG());
  if (dx.getElementType() != g.getElementType())
    return emitOpError() << "g must have the element type of dinput ("
                         << dx.getElementType() << "), got "
                         << g.getElementType();
  if (!validReduction(getReduction()))
    return emitOpError() << "reduction must be \"mean\", \"sum\" or \"none\", "
                            "got \""
                         << getReduction() << "\"";
  if (dx.getRank() < 1 || dx.getShape().drop_back() != y.getShape())
    return emitOpError() << "labels " << shapeStr(y.getShape())
                         << " must be dinput " << shapeStr(dx.getShape())
                         << " without the class axis";
  ArrayRef<int64_t> gShape =
      getReduction() == "none" ? y.getShape() : ArrayRef<int64_t>();
  if (g.getShape() != gShape)
    return emitOpError() << "g must be " << shapeStr(gShape) << ", got "
                         << shapeStr(g.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// binary_cross_entropy_with_logits
//===----------------------------------------------------------------------===//

LogicalResult BinaryCrossEntropyWithLogitsOp::inferReturnTypes(
    MLIRContext *, Loc loc, Adaptor a, Types &types) {
  constexpr StringLiteral op = "binary_cross_entropy_with_logits";
  auto x = tensorOf(a.getInput()), t = tensorOf(a.getTarget());
  if (x != t)
    return fail(loc, Twine(op) + " input and target must share a type, got " +
                         shapeStr(x.getShape()) + " and " +
                         shapeStr(t.getShape()) +
                         " (insert a graph.cast for element types)");
  if (Value pw = a.getPosWeight()) {
    auto w = tensorOf(pw);
    // pos_weight broadcasts over the last dimension (one weight per class).
    bool fits = w.getElementType() == x.getElementType() &&
                w.getRank() == 1 && x.getRank() >= 1 &&
                (w.getDimSize(0) == 1 ||
                 w.getDimSize(0) == x.getShape().back());
    if (!fits)
      return fail(loc, Twine(op) + " pos_weight " + shapeStr(w.getShape()) +
                           " must be [C] or [1] for the input " +
                           shapeStr(x.getShape()) +
                           " (classes last), with its element type");
  }
  if (failed(checkReduction(loc, op, a.getReduction())))
    return failure();
  types.push_back(a.getReduction() == "none"
                      ? x
                      : RankedTensorType::get({}, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// argmax, gather, cumsum
//===----------------------------------------------------------------------===//

namespace {
FailureOr<int64_t> axisIn(Loc loc, StringRef op, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    (void)fail(loc, op + " axis " + Twine(axis) +
                        " is out of range for a tensor of rank " + Twine(rank));
    return failure();
  }
  return a;
}
} // namespace

LogicalResult ArgmaxOp::inferReturnTypes(MLIRContext *ctx, Loc loc, Adaptor a,
                                         Types &types) {
  auto x = tensorOf(a.getInput());
  FailureOr<int64_t> axis = axisIn(loc, "argmax", a.getAxis(), x.getRank());
  if (failed(axis))
    return failure();
  if (x.getDimSize(*axis) == 0)
    return fail(loc, "argmax of an empty axis");
  SmallVector<int64_t> shape(x.getShape());
  if (a.getKeepdim())
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  types.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

// torch.gather: the index has the input's rank, and along every axis but
// |axis| it is no larger than the input.
static LogicalResult checkGather(Loc loc, StringRef op,
                                 RankedTensorType input,
                                 RankedTensorType index, int64_t axis) {
  if (failed(axisIn(loc, op, axis, input.getRank())))
    return failure();
  int64_t a = axis < 0 ? axis + input.getRank() : axis;
  bool fits = index.getRank() == input.getRank();
  for (int64_t d = 0; fits && d < index.getRank(); ++d)
    fits = d == a || index.getDimSize(d) <= input.getDimSize(d);
  if (!fits)
    return fail(loc, op + " index " + shapeStr(index.getShape()) +
                         " must have the rank of the input " +
                         shapeStr(input.getShape()) +
                         " and no larger sizes off the axis");
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor a,
                                         Types &types) {
  auto x = tensorOf(a.getInput()), i = tensorOf(a.getIndex());
  if (failed(checkGather(loc, "gather", x, i, a.getAxis())))
    return failure();
  types.push_back(RankedTensorType::get(i.getShape(), x.getElementType()));
  return success();
}

LogicalResult GatherBackwardOp::verify() {
  auto dx = tensorOf(getDinput()), i = tensorOf(getIndex()),
       g = tensorOf(getG());
  if (g.getElementType() != dx.getElementType() ||
      g.getShape() != i.getShape())
    return emitOpError() << "g must have the index's shape "
                         << shapeStr(i.getShape())
                         << " and dinput's element type, got " << g;
  return checkGather(getLoc(), "gather_backward", dx, i, getAxis());
}

LogicalResult CumsumOp::verify() {
  return axisIn(getLoc(), "cumsum", getAxis(), tensorOf(getInput()).getRank());
}
