//===- TrainBuildStep.cpp - @m_grad -> @m_step with explicit epilogue ops -===//
//
// The step function holds every piece of state as an argument and returns
// its new value, so targets can keep the state wherever they like (host
// arrays, device buffers) and the epilogue can be fused as a whole.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Train/TrainOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace ampc {
#define GEN_PASS_DEF_TRAINBUILDSTEP
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;

namespace {

// Collects arguments and results with their attributes while the body is
// built, then creates the function type at the end.
struct Signature {
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
};

struct TrainBuildStepPass
    : ampc::impl::TrainBuildStepBase<TrainBuildStepPass> {
  using TrainBuildStepBase::TrainBuildStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto models = module.getOps<graph::ModelOp>();
    if (models.empty()) {
      module.emitError() << "train-build-step: no graph.model";
      return signalPassFailure();
    }
    StringRef modelName = (*models.begin()).getSymName();
    std::string gradName = (modelName + "_grad").str();
    auto grad = module.lookupSymbol<func::FuncOp>(gradName);
    if (!grad) {
      module.emitError() << "train-build-step: no @" << gradName
                         << " (run graph-autodiff first)";
      return signalPassFailure();
    }
    if (!llvm::is_contained({"sgd", "adam", "adamw"}, optimizer)) {
      module.emitError() << "train-build-step: unknown optimizer '"
                         << optimizer << "'";
      return signalPassFailure();
    }
    if (!llvm::is_contained({"dynamic", "static", "none"}, lossScale)) {
      module.emitError() << "train-build-step: unknown loss-scale mode '"
                         << lossScale << "'";
      return signalPassFailure();
    }
    if (accumSteps < 1) {
      module.emitError() << "train-build-step: accum-steps must be >= 1";
      return signalPassFailure();
    }
    if (failed(build(module, grad, (modelName + "_step").str())))
      signalPassFailure();
  }

  LogicalResult build(ModuleOp module, func::FuncOp grad, std::string name) {
    MLIRContext *ctx = &getContext();
    Location loc = grad.getLoc();
    // Parameters: the arguments named graph.param, in order.
    SmallVector<std::pair<std::string, RankedTensorType>> params;
    for (unsigned i = 0; i < grad.getNumArguments(); ++i)
      if (auto p = grad.getArgAttrOfType<StringAttr>(i, graph::kParamAttr))
        params.push_back(
            {p.str(), cast<RankedTensorType>(grad.getArgument(i).getType())});
    if (params.empty())
      return grad.emitError() << "train-build-step: the model has no parameters";

    bool sgd = optimizer == "sgd";
    OpBuilder b(ctx);
    Signature sig;
    Block *body = new Block();
    auto named = [&](StringRef key, Attribute value) {
      return DictionaryAttr::get(ctx, {NamedAttribute(key, value)});
    };
    auto unitNamed = [&](StringRef key) {
      return named(key, UnitAttr::get(ctx));
    };
    auto addArg = [&](Type type, DictionaryAttr attrs) -> Value {
      sig.argTypes.push_back(type);
      sig.argAttrs.push_back(attrs);
      return body->addArgument(type, loc);
    };
    auto str = [&](const std::string &s) { return StringAttr::get(ctx, s); };

    Type f32 = Float32Type::get(ctx);
    auto scalar = [&](Type t) { return RankedTensorType::get({}, t); };
    Type f32s = scalar(f32), i32s = scalar(IntegerType::get(ctx, 32)),
         i64s = scalar(IntegerType::get(ctx, 64));

    SmallVector<Value> w, g, m, v;
    for (auto &[p, t] : params)
      w.push_back(addArg(t, named(train::kParamAttr, str(p))));
    for (auto &[p, t] : params)
      g.push_back(addArg(t, named(train::kGradAttr, str(p))));
    for (auto &[p, t] : params)
      m.push_back(addArg(t, named(train::kStateAttr,
                                  str(p + (sgd ? ".momentum_buffer"
                                               : ".exp_avg")))));
    if (!sgd)
      for (auto &[p, t] : params)
        v.push_back(addArg(t, named(train::kStateAttr, str(p + ".exp_avg_sq"))));
    Value step = addArg(i64s, unitNamed(train::kStepCountAttr));
    Value scale = addArg(f32s, named(train::kScalerAttr, str("scale")));
    Value tracker = addArg(i32s, named(train::kScalerAttr, str("growth_tracker")));
    Value hystLeft =
        addArg(i32s, named(train::kScalerAttr, str("hysteresis_left")));
    Value divisor = addArg(f32s, unitNamed(train::kGradDivisorAttr));
    llvm::StringMap<Value> hyper;
    auto addHyper = [&](StringRef h, Type t) {
      hyper[h] = addArg(t, named(train::kHyperAttr, StringAttr::get(ctx, h)));
    };
    if (sgd) {
      for (StringRef h : {"lr", "momentum", "dampening", "weight_decay"})
        addHyper(h, f32s);
    } else {
      for (StringRef h : {"lr", "beta1", "beta2", "eps", "weight_decay"})
        addHyper(h, f32s);
    }
    if (clipNorm > 0)
      addHyper("clip_norm", f32s);
    if (clipValue > 0)
      addHyper("clip_value", f32s);
    addHyper("growth_factor", f32s);
    addHyper("growth_interval", i32s);
    addHyper("backoff_factor", f32s);
    addHyper("hysteresis", i32s);
    addHyper("min_scale", f32s);
    addHyper("max_scale", f32s);

    // The epilogue, in PyTorch's order.
    b.setInsertionPointToEnd(body);
    auto unscale = train::UnscaleOp::create(b, loc, scale, divisor, g);
    Value found = unscale.getFoundInf();
    Value norm = train::GlobalNormOp::create(b, loc, unscale.getSumsq());
    SmallVector<Value> grads(unscale.getUnscaled());
    Value coef;
    if (clipNorm > 0) {
      coef = train::ClipCoefOp::create(b, loc, norm, hyper["clip_norm"]);
      auto clip = train::ClipByNormOp::create(b, loc, coef, grads);
      grads.assign(clip.getClipped().begin(), clip.getClipped().end());
    } else {
      coef = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(cast<ShapedType>(f32s), 1.0f));
    }
    if (clipValue > 0) {
      auto clip =
          train::ClipByValueOp::create(b, loc, hyper["clip_value"], grads);
      grads.assign(clip.getClipped().begin(), clip.getClipped().end());
    }
    Value t = train::AdvanceStepOp::create(b, loc, step, found);
    SmallVector<Value> newW, newM, newV;
    for (size_t i = 0; i < params.size(); ++i) {
      if (sgd) {
        auto op = train::SgdOp::create(
            b, loc, w[i].getType(), w[i].getType(), w[i], grads[i], m[i], t,
            found, hyper["lr"], hyper["momentum"], hyper["dampening"],
            hyper["weight_decay"], nesterov);
        newW.push_back(op.getNewParam());
        newM.push_back(op.getNewMomentumBuffer());
      } else {
        auto op = train::AdamOp::create(
            b, loc, w[i].getType(), w[i].getType(), w[i].getType(), w[i],
            grads[i], m[i], v[i], t, found, hyper["lr"], hyper["beta1"],
            hyper["beta2"], hyper["eps"], hyper["weight_decay"],
            optimizer == "adamw");
        newW.push_back(op.getNewParam());
        newM.push_back(op.getNewExpAvg());
        newV.push_back(op.getNewExpAvgSq());
      }
    }
    auto scaler = train::UpdateScaleOp::create(
        b, loc, f32s, i32s, i32s, scale, tracker, hystLeft, found,
        hyper["growth_factor"], hyper["growth_interval"],
        hyper["backoff_factor"], hyper["hysteresis"], hyper["min_scale"],
        hyper["max_scale"], lossScale);

    // Results, in the order train.fused_epilogue returns them.
    SmallVector<Value> results;
    auto addResult = [&](Value value, DictionaryAttr attrs) {
      results.push_back(value);
      sig.resultTypes.push_back(value.getType());
      sig.resultAttrs.push_back(attrs);
    };
    for (size_t i = 0; i < params.size(); ++i)
      addResult(newW[i], named(train::kParamAttr, str(params[i].first)));
    for (size_t i = 0; i < params.size(); ++i)
      addResult(newM[i], sig.argAttrs[2 * params.size() + i]);
    for (size_t i = 0; i < newV.size(); ++i)
      addResult(newV[i], sig.argAttrs[3 * params.size() + i]);
    addResult(t, unitNamed(train::kStepCountAttr));
    addResult(scaler.getNewScale(), named(train::kScalerAttr, str("scale")));
    addResult(scaler.getNewGrowthTracker(),
              named(train::kScalerAttr, str("growth_tracker")));
    addResult(scaler.getNewHysteresisLeft(),
              named(train::kScalerAttr, str("hysteresis_left")));
    addResult(norm, named(train::kStatAttr, str("grad_norm")));
    addResult(found, named(train::kStatAttr, str("found_inf")));
    addResult(coef, named(train::kStatAttr, str("clip_coef")));
    func::ReturnOp::create(b, loc, results);

    b.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(
        b, loc, name, FunctionType::get(ctx, sig.argTypes, sig.resultTypes));
    fn.getBody().push_back(body);
    fn.setAllArgAttrs(sig.argAttrs);
    fn.setAllResultAttrs(sig.resultAttrs);

    auto f = [&](double x) { return FloatAttr::get(f32, x); };
    auto i = [&](int64_t x) {
      return IntegerAttr::get(IntegerType::get(ctx, 32), x);
    };
    // Defaults of the runtime hyperparameters, under their names in
    // runtime/HyperParams.def (the config's verifier checks them).
    NamedAttrList defaults;
    defaults.append("lr", f(lr));
    defaults.append("momentum", f(momentum));
    // torch.optim's defaults: AdamW decays by 0.01, SGD and Adam not at all.
    double decay = weightDecay >= 0 ? double(weightDecay)
                   : optimizer == "adamw" ? 0.01
                                          : 0.0;
    defaults.append("weight_decay", f(decay));
    if (clipNorm > 0)
      defaults.append("clip_norm", f(clipNorm));
    if (clipValue > 0)
      defaults.append("clip_value", f(clipValue));
    // A static scale never changes; none is a scale of 1.
    defaults.append("init_scale", f(lossScale == "none" ? 1.0 : initScale));
    defaults.append("growth_interval", i(growthInterval));
    defaults.append("hysteresis", i(hysteresis));
    auto config = train::ConfigAttr::getChecked(
        [&] { return fn.emitError("train-build-step: "); }, ctx,
        StringRef(amp), StringRef(optimizer), StringRef(lossScale),
        bool(nesterov), clipNorm > 0, clipValue > 0, int64_t(accumSteps),
        defaults.getDictionary(ctx));
    if (!config)
      return failure();
    fn->setAttr(train::kConfigAttr, config);
    return success();
  }
};

} // namespace
