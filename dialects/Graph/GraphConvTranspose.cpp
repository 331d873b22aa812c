//===- GraphConvTranspose.cpp - conv_transpose2d: shape inference ----------===//
//
// The messages name the shapes and attributes involved: they are what a user
// sees for a malformed model file or an ONNX ConvTranspose that does not fit.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

// Why the [h, w] pair |v| named |name| is malformed (values must be >= |min|),
// or "".
std::string pairProblem(StringRef name, ArrayRef<int64_t> v, int64_t min) {
  if (v.size() != 2)
    return (name + " must have 2 values [h, w], got " + Twine(v.size())).str();
  for (int64_t x : v)
    if (x < min)
      return (name + " values must be >= " + Twine(min) + ", got " +
              shapeStr(v))
          .str();
  return "";
}

// The result shape of conv_transpose2d, or why there is none (|why|).
SmallVector<int64_t> resultShape(ConvTranspose2dOp::Adaptor a,
                                 std::string &why) {
  auto x = tensorOf(a.getInput()), w = tensorOf(a.getWeight());
  if (x.getRank() != 4 || w.getRank() != 4) {
    why = "needs input [N, Cin, H, W] and weight [Cin, Cout/groups, KH, KW], "
          "got " +
          shapeStr(x.getShape()) + " and " + shapeStr(w.getShape());
    return {};
  }
  if (x.getElementType() != w.getElementType()) {
    why = "input and weight must have one element type";
    return {};
  }
  for (auto [name, v, min] :
       {std::tuple<StringRef, ArrayRef<int64_t>, int64_t>{"stride",
                                                          a.getStride(), 1},
        {"dilation", a.getDilation(), 1},
        {"padding", a.getPadding(), 0},
        {"output_padding", a.getOutputPadding(), 0}}) {
    why = pairProblem(name, v, min);
    if (!why.empty())
      return {};
  }
  int64_t g = a.getGroups(), cin = x.getDimSize(1);
  if (g < 1 || cin % g) {
    why = "groups " + std::to_string(g) + " must divide the " +
          std::to_string(cin) + " input channels";
    return {};
  }
  if (w.getDimSize(0) != cin) {
    why = "weight " + shapeStr(w.getShape()) + " must have the input's " +
          std::to_string(cin) + " channels first (weight is [Cin, " +
          "Cout/groups, KH, KW])";
    return {};
  }
  int64_t cout = w.getDimSize(1) * g;
  if (Value b = a.getBias()) {
    auto bt = tensorOf(b);
    if (bt.getElementType() != x.getElementType() || bt.getRank() != 1 ||
        bt.getDimSize(0) != cout) {
      why = "bias must be [" + std::to_string(cout) +
            "] of the input's element type, got " + shapeStr(bt.getShape());
      return {};
    }
  }
  SmallVector<int64_t> shape = {x.getDimSize(0), cout, 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t s = a.getStride()[i], op = a.getOutputPadding()[i];
    // Past the stride, output_padding rows would get no tap of the
    // conv2d whose input cotangent this is.
    if (op >= s) {
      why = "output_padding " + shapeStr(a.getOutputPadding()) +
            " must be smaller than stride " + shapeStr(a.getStride());
      return {};
    }
    int64_t in = x.getDimSize(2 + i), k = w.getDimSize(2 + i);
    int64_t out = (in - 1) * s - 2 * a.getPadding()[i] +
                  a.getDilation()[i] * (k - 1) + op + 1;
    if (in < 1 || k < 1 || out < 1) {
      why = "padding " + shapeStr(a.getPadding()) +
            " leaves no output for input " +
            shapeStr(x.getShape().drop_front(2)) + " and kernel " +
            shapeStr(w.getShape().drop_front(2));
      return {};
    }
    shape[2 + i] = out;
  }
  return shape;
}

} // namespace

LogicalResult ConvTranspose2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor a,
    SmallVectorImpl<Type> &types) {
  std::string why;
  SmallVector<int64_t> shape = resultShape(a, why);
  if (shape.empty())
    return emitOptionalError(loc, "conv_transpose2d " + why);
  types.push_back(
      RankedTensorType::get(shape, tensorOf(a.getInput()).getElementType()));
  return success();
}
