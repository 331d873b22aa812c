//===- GraphGroupNorm.cpp - group_norm: shape inference, verifiers ---------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

// Why |x|, |w| and |num_groups| do not make a group_norm, or "".
std::string groupNormProblem(Value x, Value w, int64_t groups) {
  auto xt = tensorOf(x), wt = tensorOf(w);
  if (xt.getRank() < 2)
    return "needs x of rank >= 2 [N, C, *], got rank " +
           std::to_string(xt.getRank());
  int64_t c = xt.getDimSize(1);
  if (groups < 1 || c % groups != 0)
    return "num_groups " + std::to_string(groups) +
           " must be >= 1 and divide the " + std::to_string(c) + " channels";
  if (wt.getRank() != 1 || wt.getDimSize(0) != c ||
      wt.getElementType() != xt.getElementType())
    return "weight and bias must be [" + std::to_string(c) +
           "] of x's element type";
  return "";
}

} // namespace

LogicalResult GroupNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &types) {
  std::string why = groupNormProblem(a.getInput(), a.getWeight(),
                                     a.getNumGroups());
  if (why.empty() && tensorOf(a.getBias()) != tensorOf(a.getWeight()))
    why = "weight and bias must have one type";
  if (why.empty() && !(a.getEps().convertToDouble() > 0))
    why = "eps must be > 0";
  if (!why.empty()) {
    if (loc)
      mlir::emitError(*loc, "group_norm " + why);
    return failure();
  }
  types.push_back(a.getInput().getType());
  return success();
}

LogicalResult GroupNormBackwardOp::verify() {
  if (std::string why = groupNormProblem(getX(), getWeight(), getNumGroups());
      !why.empty())
    return emitOpError() << why;
  if (getG().getType() != getX().getType() ||
      getDx().getType() != getX().getType())
    return emitOpError() << "g and dx must have the type of x "
                         << getX().getType();
  if (getDweight().getType() != getWeight().getType() ||
      getDbias().getType() != getWeight().getType())
    return emitOpError() << "dweight and dbias must have the type of weight "
                         << getWeight().getType();
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "eps must be > 0";
  return success();
}
