//===- GraphBatchNorm.cpp - graph.buffer and batch_norm: shapes, verifiers ===//
//
// The one op family with model state: batch_norm reads (evaluation) and
// updates (training step) running statistics held in graph.buffer values.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

// batch_norm's optional attribute naming its num_batches_tracked counter
// (BatchNormOp::verify; the ModelSpec emitter reads it too).
static constexpr llvm::StringLiteral kNumBatchesTrackedAttr =
    "num_batches_tracked";

namespace {

// [C] with C = x's dimension 1 and x's element type (weight, bias), or FP32
// (running statistics: state stays FP32 whatever the input's type).
LogicalResult checkChannelVector(std::optional<Location> loc, StringRef what,
                                 Value x, Value v, bool fp32) {
  auto xt = tensorOf(x), t = tensorOf(v);
  int64_t c = xt.getDimSize(1);
  if (t.getRank() != 1 || t.getDimSize(0) != c)
    return fail(loc, "batch_norm " + what + " must be [" + Twine(c) +
                         "] (the channels of dimension 1), got " +
                         shapeStr(t.getShape()));
  if (!fp32 && t.getElementType() != xt.getElementType())
    return fail(loc, "batch_norm " + what +
                         " must have the input's element type (insert a "
                         "graph.cast)");
  return success();
}

// A graph.buffer of the model, or an argument of a function that stands for
// one (@<model>_grad's graph.buffer arguments).
bool isBufferValue(Value v) {
  if (isa_and_nonnull<BufferOp>(v.getDefiningOp()))
    return true;
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  auto fn = dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return fn && arg.getOwner()->isEntryBlock() &&
         fn.getArgAttr(arg.getArgNumber(), kBufferAttr);
}

} // namespace

LogicalResult BufferOp::verify() {
  if (!isa<ZerosInitAttr, OnesInitAttr, ConstantInitAttr>(getInit()))
    return emitOpError() << "init must be #graph.zeros, #graph.ones or "
                            "#graph.constant, got "
                         << getInit();
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &types) {
  auto x = tensorOf(a.getInput());
  if (x.getRank() != 2 && x.getRank() != 4)
    return fail(loc, "batch_norm needs x of rank 2 [N, C] or 4 [N, C, H, W], "
                     "got rank " +
                         Twine(x.getRank()));
  if (failed(checkChannelVector(loc, "running_mean", a.getInput(),
                                a.getRunningMean(), true)) ||
      failed(checkChannelVector(loc, "running_var", a.getInput(),
                                a.getRunningVar(), true)) ||
      failed(checkChannelVector(loc, "weight", a.getInput(), a.getWeight(),
                                false)) ||
      failed(checkChannelVector(loc, "bias", a.getInput(), a.getBias(), false)))
    return failure();
  if (!(a.getEps().convertToDouble() > 0))
    return fail(loc, "batch_norm eps must be > 0");
  double m = a.getMomentum().convertToDouble();
  if (!(m >= 0 && m <= 1))
    return fail(loc, "batch_norm momentum must be in [0, 1]");
  types.push_back(x);
  return success();
}

LogicalResult BatchNormOp::verify() {
  // The training step writes the statistics where they live: they must be
  // model state, not a computed value.
  for (auto [v, what] : {std::pair{getRunningMean(), "running_mean"},
                         std::pair{getRunningVar(), "running_var"}})
    if (!isBufferValue(v))
      return emitOpError() << what << " must be a graph.buffer";
  // One batch element per channel leaves the unbiased variance undefined
  // (PyTorch: "Expected more than 1 value per channel when training").
  auto x = tensorOf(getInput());
  int64_t n = x.getNumElements() / x.getDimSize(1);
  if (x.getDimSize(1) > 0 && n < 2)
    return emitOpError() << "needs more than 1 value per channel, got " << n;
  // `num_batches_tracked = "bn1.num_batches_tracked"` (kNumBatchesTrackedAttr,
  // optional) names PyTorch's third BatchNorm buffer, an int64 scalar that
  // counts training forwards: the runtime keeps the count (every batch_norm
  // runs in every forward, so one count serves all; TrainState) and writes
  // it to model.safetensors as I64 under that name, so the checkpoint loads
  // with load_state_dict(strict=True). The math does not use it (momentum
  // is always set). The name is a state_dict key: not empty, and not a
  // parameter's or buffer's.
  if ((*this)->hasAttr(kNumBatchesTrackedAttr) &&
      !(*this)->getAttrOfType<StringAttr>(kNumBatchesTrackedAttr))
    return emitOpError() << kNumBatchesTrackedAttr << " must be a string";
  if (auto counter =
          (*this)->getAttrOfType<StringAttr>(kNumBatchesTrackedAttr)) {
    if (counter.getValue().empty())
      return emitOpError() << "num_batches_tracked must name the counter";
    if (auto model = (*this)->getParentOfType<ModelOp>())
      for (Operation &op : model.getBlock()) {
        auto p = dyn_cast<ParamOp>(op);
        auto b = dyn_cast<BufferOp>(op);
        if ((p && p.getName() == counter.getValue()) ||
            (b && b.getName() == counter.getValue()))
          return emitOpError() << "num_batches_tracked " << counter
                               << " is already a parameter or buffer name";
      }
  }
  return success();
}

LogicalResult BatchNormBackwardOp::verify() {
  auto x = tensorOf(getX());
  if (x.getRank() != 2 && x.getRank() != 4)
    return emitOpError() << "needs x of rank 2 or 4";
  if (getG().getType() != x || getDx().getType() != x)
    return emitOpError() << "g and dx must have the type of x " << x;
  auto w = tensorOf(getWeight());
  if (w.getRank() != 1 || w.getDimSize(0) != x.getDimSize(1) ||
      w.getElementType() != x.getElementType())
    return emitOpError() << "weight must be [" << x.getDimSize(1)
                         << "] of x's element type";
  if (getDweight().getType() != w || getDbias().getType() != w)
    return emitOpError() << "dweight and dbias must have the type of weight "
                         << w;
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "eps must be > 0";
  return success();
}
