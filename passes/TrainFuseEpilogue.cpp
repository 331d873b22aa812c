//===- TrainFuseEpilogue.cpp - The epilogue ops -> train.fused_epilogue ---===//
#include "dialects/Train/TrainOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace ampc {
#define GEN_PASS_DEF_TRAINFUSEEPILOGUE
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

// The epilogue of one step function, gathered op by op.
struct Epilogue {
  train::UnscaleOp unscale;
  train::GlobalNormOp norm;
  train::ClipCoefOp coef;
  train::ClipByNormOp clipNorm;
  train::ClipByValueOp clipValue;
  train::AdvanceStepOp advance;
  train::UpdateScaleOp scaler;
  SmallVector<train::SgdOp> sgd;
  SmallVector<train::AdamOp> adam;
};

LogicalResult gather(func::FuncOp fn, Epilogue &e) {
  auto once = [&](auto &slot, auto op) -> LogicalResult {
    if (slot)
      return op.emitOpError() << "appears twice in one epilogue";
    slot = op;
    return success();
  };
  for (Operation &op : fn.getBody().front()) {
    LogicalResult ok =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](train::UnscaleOp o) { return once(e.unscale, o); })
            .Case([&](train::GlobalNormOp o) { return once(e.norm, o); })
            .Case([&](train::ClipCoefOp o) { return once(e.coef, o); })
            .Case([&](train::ClipByNormOp o) { return once(e.clipNorm, o); })
            .Case([&](train::ClipByValueOp o) { return once(e.clipValue, o); })
            .Case([&](train::AdvanceStepOp o) { return once(e.advance, o); })
            .Case([&](train::UpdateScaleOp o) { return once(e.scaler, o); })
            .Case([&](train::SgdOp o) {
              e.sgd.push_back(o);
              return success();
            })
            .Case([&](train::AdamOp o) {
              e.adam.push_back(o);
              return success();
            })
            .Default([](Operation *) { return success(); });
    if (failed(ok))
      return failure();
  }
  if (!e.unscale)
    return success(); // not a step function
  size_t n = e.unscale.getGrads().size();
  if (!e.norm || !e.advance || !e.scaler)
    return fn.emitError() << "train-fuse-epilogue: incomplete epilogue "
                             "(needs global_norm, advance_step, update_scale)";
  if ((e.sgd.empty() == e.adam.empty()) ||
      (e.sgd.size() + e.adam.size()) != n)
    return fn.emitError() << "train-fuse-epilogue: needs one optimizer "
                             "update of one kind per gradient";
  if (bool(e.coef) != bool(e.clipNorm))
    return fn.emitError() << "train-fuse-epilogue: clip_coef and "
                             "clip_by_norm come together";
  // The fused op reads what it runs from the function's train.config, so
  // the config must say what the ops do.
  auto config = fn->getAttrOfType<train::ConfigAttr>(train::kConfigAttr);
  if (!config)
    return fn.emitError() << "train-fuse-epilogue: the step function has no "
                          << train::kConfigAttr;
  bool sgd = !e.sgd.empty();
  StringRef optimizer =
      sgd ? "sgd" : (e.adam[0].getDecoupled() ? "adamw" : "adam");
  if (config.getOptimizer() != optimizer ||
      config.getLossScale() != e.scaler.getMode() ||
      config.getClipNorm() != bool(e.coef) ||
      config.getClipValue() != bool(e.clipValue) ||
      config.getNesterov() != (sgd && e.sgd[0].getNesterov()))
    return fn.emitError() << "train-fuse-epilogue: the epilogue ops do not "
                             "match "
                          << train::kConfigAttr << " " << config;
  return success();
}

struct TrainFuseEpiloguePass
    : ampc::impl::TrainFuseEpilogueBase<TrainFuseEpiloguePass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      Epilogue e;
      if (failed(gather(fn, e)))
        return signalPassFailure();
      if (e.unscale)
        fuse(e);
    }
  }

  void fuse(Epilogue &e) {
    MLIRContext *ctx = &getContext();
    bool sgd = !e.sgd.empty();
    size_t n = e.unscale.getGrads().size();
    SmallVector<Value> params, moments, second;
    SmallVector<Value> newParams, newMoments, newSecond;
    // Hyperparameters in first-use order, named by their operand role.
    SmallVector<Value> hyper;
    SmallVector<Attribute> hyperNames;
    auto addHyper = [&](StringRef name, Value value) {
      if (llvm::is_contained(hyper, value))
        return;
      hyper.push_back(value);
      hyperNames.push_back(StringAttr::get(ctx, name));
    };
    for (size_t i = 0; i < n; ++i) {
      if (sgd) {
        train::SgdOp op = e.sgd[i];
        params.push_back(op.getParam());
        moments.push_back(op.getMomentumBuffer());
        newParams.push_back(op.getNewParam());
        newMoments.push_back(op.getNewMomentumBuffer());
        addHyper("lr", op.getLr());
        addHyper("momentum", op.getMomentum());
        addHyper("dampening", op.getDampening());
        addHyper("weight_decay", op.getWeightDecay());
      } else {
        train::AdamOp op = e.adam[i];
        params.push_back(op.getParam());
        moments.push_back(op.getExpAvg());
        second.push_back(op.getExpAvgSq());
        newParams.push_back(op.getNewParam());
        newMoments.push_back(op.getNewExpAvg());
        newSecond.push_back(op.getNewExpAvgSq());
        addHyper("lr", op.getLr());
        addHyper("beta1", op.getBeta1());
        addHyper("beta2", op.getBeta2());
        addHyper("eps", op.getEps());
        addHyper("weight_decay", op.getWeightDecay());
      }
    }
    if (e.coef)
      addHyper("clip_norm", e.coef.getMaxNorm());
    if (e.clipValue)
      addHyper("clip_value", e.clipValue.getLimit());
    train::UpdateScaleOp s = e.scaler;
    addHyper("growth_factor", s.getGrowthFactor());
    addHyper("growth_interval", s.getGrowthInterval());
    addHyper("backoff_factor", s.getBackoffFactor());
    addHyper("hysteresis", s.getHysteresis());
    addHyper("min_scale", s.getMinScale());
    addHyper("max_scale", s.getMaxScale());

    SmallVector<Value> replaced(newParams);
    replaced.append(newMoments);
    replaced.append(newSecond);
    replaced.append({e.advance.getResult(), s.getNewScale(),
                     s.getNewGrowthTracker(), s.getNewHysteresisLeft(),
                     e.norm.getNorm(), e.unscale.getFoundInf()});
    SmallVector<Type> types(ValueRange(replaced).getTypes());
    types.push_back(RankedTensorType::get({}, Float32Type::get(ctx)));

    // Insert at the end (before the terminator): every operand is a
    // function argument, and every old result is only used after.
    Block &block = e.unscale->getBlock()->getParent()->front();
    OpBuilder b(block.getTerminator());
    auto fused = train::FusedEpilogueOp::create(
        b, e.unscale.getLoc(), types, params, e.unscale.getGrads(), moments,
        second, e.advance.getStep(), s.getScale(), s.getGrowthTracker(),
        s.getHysteresisLeft(), e.unscale.getDivisor(), hyper,
        ArrayAttr::get(ctx, hyperNames));
    for (auto [old, now] : llvm::zip(replaced, fused.getResults()))
      old.replaceAllUsesWith(now);
    // The coefficient: the clip_coef op's result, or the constant 1 the
    // step function returned in its place.
    Value coefResult = e.coef ? e.coef.getCoef() : Value();
    if (!coefResult) {
      Operation *ret = block.getTerminator();
      coefResult = ret->getOperand(ret->getNumOperands() - 1);
    }
    coefResult.replaceAllUsesWith(fused.getClipCoef());

    // Erase the now dead epilogue (and the constant), last op first.
    SmallVector<Operation *> dead;
    for (Operation &op : block.without_terminator())
      if (&op != fused.getOperation())
        dead.push_back(&op);
    for (Operation *op : llvm::reverse(dead)) {
      if (!op->use_empty())
        continue;
      op->erase();
    }
  }
};

} // namespace
