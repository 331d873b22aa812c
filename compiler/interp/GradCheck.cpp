//===- GradCheck.cpp - Autodiff gradients vs central differences -----------===//
#include "compiler/interp/GradCheck.h"

#include "dialects/Graph/GraphOps.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace ampc;
using namespace ampc::interp;

namespace {

// Word pair k of stream |stream| under |seed|.
num::Philox4 draw(uint64_t seed, uint64_t stream, uint64_t k) {
  return num::philox4x32({uint32_t(k), uint32_t(k >> 32), uint32_t(stream),
                          uint32_t(stream >> 32)},
                         seed);
}

// The number of valid values of an integer input: the classes of the
// cross_entropy or the rows of the embedding table that (perhaps through
// reshapes and slices) consume it. 2 when nothing bounds it.
int64_t intRange(Value v) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto ce = dyn_cast<graph::CrossEntropyOp>(user)) {
      if (use.getOperandNumber() == 1)
        best = std::min(best, cast<RankedTensorType>(ce.getLogits().getType())
                                  .getShape()
                                  .back());
    } else if (auto nll = dyn_cast<graph::NllLossOp>(user)) {
      if (use.getOperandNumber() == 1)
        best = std::min(best, cast<RankedTensorType>(nll.getInput().getType())
                                  .getShape()
                                  .back());
    } else if (auto ga = dyn_cast<graph::GatherOp>(user)) {
      if (use.getOperandNumber() == 1) {
        auto x = cast<RankedTensorType>(ga.getInput().getType());
        int64_t axis = int64_t(ga.getAxis()); // I64Attr reads as uint64_t
        if (axis < 0)
          axis += x.getRank();
        best = std::min(best, x.getDimSize(axis));
      }
    } else if (auto emb = dyn_cast<graph::EmbeddingOp>(user)) {
      if (use.getOperandNumber() == 0)
        best = std::min(
            best, cast<RankedTensorType>(emb.getTable().getType()).getDimSize(0));
    } else if (isa<graph::ReshapeOp, graph::TransposeOp, graph::SliceOp,
                   graph::ConcatOp>(user)) {
      best = std::min(best, intRange(user->getResult(0)));
    }
  }
  return best;
}

} // namespace

num::InitAttrs ampc::interp::initAttrsOf(Attribute a) {
  num::InitAttrs r;
  if (isa<graph::ZerosInitAttr>(a)) {
    r.kind = "zeros";
  } else if (isa<graph::OnesInitAttr>(a)) {
    r.kind = "ones";
  } else if (auto c = dyn_cast<graph::ConstantInitAttr>(a)) {
    r.kind = "constant", r.value = c.getValue();
  } else if (auto n = dyn_cast<graph::NormalInitAttr>(a)) {
    r.kind = "normal", r.mean = n.getMean(), r.std = n.getStd();
  } else if (auto u = dyn_cast<graph::UniformInitAttr>(a)) {
    r.kind = "uniform", r.a = u.getA(), r.b = u.getB();
  } else if (auto x = dyn_cast<graph::XavierUniformInitAttr>(a)) {
    r.kind = "xavier_uniform", r.gain = x.getGain();
  } else if (auto x = dyn_cast<graph::XavierNormalInitAttr>(a)) {
    r.kind = "xavier_normal", r.gain = x.getGain();
  } else if (auto k = dyn_cast<graph::KaimingUniformInitAttr>(a)) {
    r.kind = "kaiming_uniform", r.a = k.getA(), r.mode = k.getMode().str(),
    r.nonlinearity = k.getNonlinearity().str();
  } else if (auto k = dyn_cast<graph::KaimingNormalInitAttr>(a)) {
    r.kind = "kaiming_normal", r.a = k.getA(), r.mode = k.getMode().str(),
    r.nonlinearity = k.getNonlinearity().str();
  } else if (auto t = dyn_cast<graph::TruncNormalInitAttr>(a)) {
    r.kind = "trunc_normal", r.mean = t.getMean(), r.std = t.getStd(),
    r.a = t.getA(), r.b = t.getB();
  } else {
    r.kind = "normal"; // unknown: N(0, 1)
  }
  return r;
}

namespace {

// splitmix64: probe selection only.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Up to |maxProbes| distinct element indices of [0, n), sorted.
std::vector<int64_t> chooseProbes(int64_t n, int64_t maxProbes,
                                  uint64_t seed) {
  std::vector<int64_t> idx(n);
  for (int64_t k = 0; k < n; ++k)
    idx[k] = k;
  if (maxProbes < n) {
    uint64_t state = seed;
    for (int64_t k = 0; k < maxProbes; ++k)
      std::swap(idx[k], idx[k + int64_t(nextRandom(state) % uint64_t(n - k))]);
    idx.resize(maxProbes);
    std::sort(idx.begin(), idx.end());
  }
  return idx;
}

} // namespace

bool GradCheckReport::ok() const {
  if (!lossOk)
    return false;
  for (const GradCheckRow &r : rows)
    if (!r.ok)
      return false;
  return true;
}

NamedTensors ampc::interp::makeRandomBindings(graph::ModelOp model,
                                              uint64_t seed) {
  NamedTensors b;
  for (Operation &op : model.getBlock()) {
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      auto type = cast<RankedTensorType>(in.getType());
      Tensor t(shapeOf(type), elemTypeOf(type));
      uint64_t stream = num::streamId(("input:" + in.getName()).str());
      if (t.isFloat()) {
        for (int64_t k = 0; k < t.size(); ++k) {
          num::Philox4 r = draw(seed, stream, uint64_t(k));
          t.f[k] = num::standardNormal(r[0], r[1]);
        }
      } else {
        int64_t n = intRange(in.getResult());
        if (n == std::numeric_limits<int64_t>::max() || n < 1)
          n = 2;
        for (int64_t k = 0; k < t.size(); ++k)
          t.i[k] = int64_t(draw(seed, stream, uint64_t(k))[0] % uint64_t(n));
      }
      b[in.getName().str()] = std::move(t);
    } else if (auto p = dyn_cast<graph::ParamOp>(op)) {
      auto type = cast<RankedTensorType>(p.getType());
      Shape shape = shapeOf(type);
      num::InitSpec spec =
          num::resolveInit(initAttrsOf(p.getInit()), std::span(shape));
      std::vector<float> values(numElements(shape));
      uint64_t stream = num::streamId(p.getName());
      num::fillInit(spec, seed, stream, values);
      Tensor t(shape, ElemType::F32);
      for (int64_t k = 0; k < t.size(); ++k) {
        t.f[k] = values[k];
        if (spec.kind == num::InitSpec::Constant) {
          num::Philox4 r = draw(seed, ~stream, uint64_t(k));
          t.f[k] += 0.5 * num::standardNormal(r[0], r[1]);
        }
      }
      b[p.getName().str()] = std::move(t);
    }
  }
  return b;
}

FailureOr<GradCheckReport>
ampc::interp::runGradCheck(graph::ModelOp model, func::FuncOp gradFunc,
                           const GradCheckOptions &options) {
  InterpOptions io;
  io.numerics = Numerics::FP64;
  io.seed = options.seed;
  io.step = options.step;
  Interpreter interp(io);
  NamedTensors bindings = makeRandomBindings(model, options.seed);

  // Arguments by their contract attributes, not by position.
  std::vector<Tensor> args;
  for (unsigned k = 0; k < gradFunc.getNumArguments(); ++k) {
    StringAttr name = gradFunc.getArgAttrOfType<StringAttr>(k, graph::kInputAttr);
    if (!name)
      name = gradFunc.getArgAttrOfType<StringAttr>(k, graph::kParamAttr);
    if (auto buf = gradFunc.getArgAttrOfType<StringAttr>(k, graph::kBufferAttr)) {
      // Running statistics: read by nothing in the training form.
      auto type = cast<RankedTensorType>(gradFunc.getArgument(k).getType());
      args.push_back(Tensor(shapeOf(type), ElemType::F32));
      continue;
    }
    if (name) {
      auto it = bindings.find(name.str());
      if (it == bindings.end())
        return gradFunc.emitError()
               << "argument #" << k << " names '" << name.getValue()
               << "', which the model does not have";
      args.push_back(it->second);
    } else if (gradFunc.getArgAttr(k, graph::kLossScaleAttr)) {
      args.push_back(Tensor::scalar(1.0));
    } else {
      return gradFunc.emitError()
             << "argument #" << k
             << " has no graph.input, graph.param or graph.loss_scale attribute";
    }
  }
  FailureOr<std::vector<Tensor>> results = interp.runFunction(gradFunc, args);
  if (failed(results))
    return failure();

  NamedTensors grads;
  GradCheckReport report;
  bool haveLoss = false;
  for (unsigned k = 0; k < gradFunc.getNumResults(); ++k) {
    if (auto g = gradFunc.getResultAttrOfType<StringAttr>(k, graph::kGradAttr))
      grads[g.str()] = (*results)[k];
    auto o = gradFunc.getResultAttrOfType<StringAttr>(k, graph::kOutputAttr);
    if (o && o.getValue() == "loss") {
      report.gradLoss = (*results)[k].f.at(0);
      haveLoss = true;
    }
  }

  // Probes rerun only the ops downstream of the perturbed parameter.
  ModelValues baseValues;
  FailureOr<NamedTensors> baseOuts =
      interp.runModel(model, bindings, &baseValues);
  if (failed(baseOuts))
    return failure();
  auto lossAt = [&](const NamedTensors &b,
                    StringRef changed) -> FailureOr<double> {
    FailureOr<NamedTensors> outs =
        interp.rerunModel(model, b, baseValues, changed);
    if (failed(outs))
      return failure();
    return outs->at("loss").f.at(0);
  };
  FailureOr<double> base = baseOuts->at("loss").f.at(0);
  report.modelLoss = *base;
  if (haveLoss) {
    double d = std::fabs(report.modelLoss - report.gradLoss);
    report.lossOk = d <= options.atol + options.rtol * std::fabs(*base);
  }

  for (Operation &op : model.getBlock()) {
    auto param = dyn_cast<graph::ParamOp>(op);
    if (!param)
      continue;
    std::string name = param.getName().str();
    auto g = grads.find(name);
    if (g == grads.end())
      return gradFunc.emitError() << "returns no graph.grad for parameter '"
                                  << name << "'";
    const Tensor &value = bindings.at(name);
    if (g->second.shape != value.shape)
      return gradFunc.emitError()
             << "gradient of '" << name << "' is "
             << shapeToString(g->second.shape) << ", the parameter is "
             << shapeToString(value.shape);
    GradCheckRow row;
    row.name = name;
    for (int64_t k : chooseProbes(value.size(), options.maxProbes,
                                  options.seed ^ num::streamId(name))) {
      NamedTensors probe = bindings;
      Tensor &p = probe.at(name);
      p.f[k] = value.f[k] + options.eps;
      FailureOr<double> plus = lossAt(probe, name);
      p.f[k] = value.f[k] - options.eps;
      FailureOr<double> minus = lossAt(probe, name);
      if (failed(plus) || failed(minus))
        return failure();
      double numeric = (*plus - *minus) / (2 * options.eps);
      double analytic = g->second.f[k];
      double absErr = std::fabs(analytic - numeric);
      double scale = std::max(std::fabs(analytic), std::fabs(numeric));
      double relErr = scale > 0 ? absErr / scale : 0.0;
      // NaN fails every comparison, so test for the pass, not the failure.
      if (!(absErr <= options.atol + options.rtol * std::fabs(numeric)))
        row.ok = false;
      if (!(absErr <= row.maxAbs))
        row.maxAbs = absErr;
      if (!(relErr <= row.maxRel))
        row.maxRel = relErr;
      ++row.probes;
    }
    report.rows.push_back(row);
  }
  return report;
}

void ampc::interp::printGradCheckReport(const GradCheckReport &report,
                                        const GradCheckOptions &options,
                                        llvm::raw_ostream &os) {
  size_t width = 9;
  for (const GradCheckRow &r : report.rows)
    width = std::max(width, r.name.size());
  os << llvm::left_justify("parameter", width) << "  probes  max abs err"
     << "  max rel err  verdict\n";
  int failures = 0;
  for (const GradCheckRow &r : report.rows) {
    os << llvm::left_justify(r.name, width) << "  "
       << llvm::format("%6lld", (long long)r.probes) << "  "
       << llvm::format("%11.3e", r.maxAbs) << "  "
       << llvm::format("%11.3e", r.maxRel) << "  " << (r.ok ? "ok" : "FAIL")
       << "\n";
    failures += !r.ok;
  }
  if (!report.lossOk)
    os << "loss of the _grad function " << llvm::format("%.9g", report.gradLoss)
       << " differs from the model's " << llvm::format("%.9g", report.modelLoss)
       << ": FAIL\n";
  os << "gradcheck: ";
  if (report.ok())
    os << "all " << report.rows.size() << " parameters ok";
  else
    os << failures << " of " << report.rows.size() << " parameters FAILED";
  os << " (eps " << llvm::format("%g", options.eps) << ", atol "
     << llvm::format("%g", options.atol) << ", rtol "
     << llvm::format("%g", options.rtol) << ", loss "
     << llvm::format("%.6g", report.modelLoss) << ")\n";
}
