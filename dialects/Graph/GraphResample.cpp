//===- GraphResample.cpp - adaptive pooling, nearest/bilinear upsampling --===//
//
// Shape inference of the three forward ops and the verifiers of their backward
// ops; the backward ops check that their cotangent has the shape the forward
// op would give the result type's (the input's) shape.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"
#include "runtime/numerics/Resample.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

// The adaptive pool result shape of |x| or why there is none.
FailureOr<SmallVector<int64_t>> adaptiveShape(ArrayRef<int64_t> x,
                                              ArrayRef<int64_t> size,
                                              std::string &why) {
  if (x.size() != 4) {
    why = "needs an input [N, C, H, W], got " + shapeStr(x);
    return failure();
  }
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) {
    why = "output_size must be two positive sizes [OH, OW], got " +
          shapeStr(size);
    return failure();
  }
  return SmallVector<int64_t>{x[0], x[1], size[0], size[1]};
}

// The upsample result shape of |x| under size / scales, or why there is none.
FailureOr<SmallVector<int64_t>>
upsampleShape(ArrayRef<int64_t> x, std::optional<ArrayRef<int64_t>> size,
              std::optional<double> sh, std::optional<double> sw,
              std::string &why) {
  if (x.size() != 4) {
    why = "needs an input [N, C, H, W], got " + shapeStr(x);
    return failure();
  }
  bool scales = sh || sw;
  if (size.has_value() == scales || (scales && !(sh && sw))) {
    why = "needs either size = [OH, OW] or both scales_h and scales_w";
    return failure();
  }
  SmallVector<int64_t> shape(x);
  if (size) {
    if (size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1) {
      why = "size must be two positive sizes [OH, OW], got " + shapeStr(*size);
      return failure();
    }
    shape[2] = (*size)[0], shape[3] = (*size)[1];
    return shape;
  }
  double scale[2] = {*sh, *sw};
  for (int i = 0; i < 2; ++i) {
    double s = scale[i];
    int64_t o = ampc::numerics::nearestOutputSize(x[2 + i], s);
    if (!(s > 0) || o < 1) {
      why = "scales must be > 0 and give a non-empty result, got " +
            std::to_string(s) + " for size " + std::to_string(x[2 + i]);
      return failure();
    }
    shape[2 + i] = o;
  }
  return shape;
}

std::optional<double> optF64(std::optional<APFloat> f) {
  if (!f)
    return std::nullopt;
  return f->convertToDouble();
}

LogicalResult inferred(std::optional<Location> loc, StringRef op,
                       FailureOr<SmallVector<int64_t>> shape,
                       const std::string &why, Type elem,
                       SmallVectorImpl<Type> &types) {
  if (failed(shape)) {
    if (loc)
      mlir::emitError(*loc, (op + " " + why).str());
    return failure();
  }
  types.push_back(RankedTensorType::get(*shape, elem));
  return success();
}

// The checks every backward op shares: g and dx of one element type, and g
// of the shape the forward op gives dx's shape.
LogicalResult checkBackward(Operation *op, Value g, Value dx,
                            FailureOr<SmallVector<int64_t>> shape,
                            const std::string &why) {
  if (tensorOf(g).getElementType() != tensorOf(dx).getElementType())
    return op->emitOpError() << "g and dx must have one element type";
  if (failed(shape))
    return op->emitOpError() << why;
  if (tensorOf(g).getShape() != ArrayRef<int64_t>(*shape))
    return op->emitOpError()
           << "g must have the forward result's shape " << shapeStr(*shape)
           << ", got " << shapeStr(tensorOf(g).getShape());
  return success();
}

} // namespace

LogicalResult AdaptiveAvgPool2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor a,
    SmallVectorImpl<Type> &types) {
  std::string why;
  auto x = tensorOf(a.getInput());
  return inferred(loc, "adaptive_avg_pool2d",
                  adaptiveShape(x.getShape(), a.getOutputSize(), why), why,
                  x.getElementType(), types);
}

namespace {

// The two upsampling ops share their sizing attributes and rule.
template <class Adaptor>
LogicalResult inferUpsample(std::optional<Location> loc, StringRef op,
                            Adaptor a, SmallVectorImpl<Type> &types) {
  std::string why;
  auto x = tensorOf(a.getInput());
  return inferred(loc, op,
                  upsampleShape(x.getShape(), a.getSize(),
                                optF64(a.getScalesH()), optF64(a.getScalesW()),
                                why),
                  why, x.getElementType(), types);
}

template <class BackwardOp>
LogicalResult verifyUpsampleBackward(BackwardOp op) {
  std::string why;
  auto shape =
      upsampleShape(tensorOf(op.getDx()).getShape(), op.getSize(),
                    optF64(op.getScalesH()), optF64(op.getScalesW()), why);
  return checkBackward(op, op.getG(), op.getDx(), shape, why);
}

} // namespace

LogicalResult UpsampleNearest2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor a,
    SmallVectorImpl<Type> &types) {
  return inferUpsample(loc, "upsample_nearest2d", a, types);
}

LogicalResult UpsampleBilinear2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor a,
    SmallVectorImpl<Type> &types) {
  return inferUpsample(loc, "upsample_bilinear2d", a, types);
}

LogicalResult AdaptiveAvgPool2dBackwardOp::verify() {
  std::string why;
  ArrayRef<int64_t> g = tensorOf(getG()).getShape();
  auto shape = g.size() == 4
                   ? adaptiveShape(tensorOf(getDx()).getShape(),
                                   g.drop_front(2), why)
                   : FailureOr<SmallVector<int64_t>>(failure());
  if (g.size() != 4)
    why = "needs g [N, C, OH, OW], got " + shapeStr(g);
  return checkBackward(*this, getG(), getDx(), shape, why);
}

LogicalResult UpsampleNearest2dBackwardOp::verify() {
  return verifyUpsampleBackward(*this);
}

LogicalResult UpsampleBilinear2dBackwardOp::verify() {
  return verifyUpsampleBackward(*this);
}
