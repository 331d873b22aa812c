//===- Audit.cpp - Per-op range and error audit of an AMP step ------------===//
#include "compiler/audit/Audit.h"

#include "passes/amp/OpSite.h"
#include "passes/amp/Policy.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace ampc;
using namespace ampc::audit;
using interp::ElemType;
using interp::Tensor;

const char *ampc::audit::toString(Risk risk) {
  switch (risk) {
  case Risk::None:
    return "ok";
  case Risk::Precision:
    return "error";
  case Risk::Underflow:
    return "underflow";
  case Risk::Overflow:
    return "overflow";
  }
  return "?";
}

namespace {

bool isHalf(ElemType t) { return t == ElemType::F16 || t == ElemType::BF16; }

ElemType resultType(const OpRow &row) {
  return interp::elemTypeOf(row.op->getResult(row.result).getType());
}

} // namespace

Auditor::Auditor(graph::ModelOp model, func::FuncOp gradFunc, AuditOptions opts)
    : model(model), gradFunc(gradFunc), options(std::move(opts)) {
  halfType = options.mode == "bf16" ? ElemType::BF16 : ElemType::F16;
  report.model = model.getSymName().str();
  report.mode = options.mode;
  report.scale.scale = options.lossScale;

  // A value is a gradient when it depends on the loss scale, which seeds
  // the backward pass.
  Block &body = gradFunc.getBody().front();
  llvm::DenseSet<Value> scaled;
  for (unsigned k = 0; k < gradFunc.getNumArguments(); ++k)
    if (gradFunc.getArgAttr(k, graph::kLossScaleAttr))
      scaled.insert(body.getArgument(k));
  for (Operation &op : body.without_terminator()) {
    bool backward = llvm::any_of(op.getOperands(),
                                 [&](Value v) { return scaled.contains(v); });
    if (backward)
      scaled.insert(op.getResults().begin(), op.getResults().end());
    if (isa<graph::ConstantOp>(op))
      continue;
    amp::OpSite site = amp::siteOf(op.getLoc());
    for (OpResult r : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(r.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      OpRow row;
      row.op = &op;
      row.result = r.getResultNumber();
      row.loc = site.position(false);
      row.shortLoc = site.position(true);
      row.opName = amp::shortOpName(op.getName().getStringRef()).str();
      if (op.getNumResults() > 1)
        row.opName += "#" + std::to_string(row.result);
      row.name = site.name;
      if (auto p = op.getAttrOfType<StringAttr>("amp.precision"))
        row.precision = p.getValue().str();
      ElemType et = interp::elemTypeOf(type);
      row.type = interp::toString(et);
      row.backward = backward;
      TypeLimits lim = limitsOf(et);
      row.limit = lim.max;
      row.unitRoundoff = lim.unitRoundoff;
      for (Value v : op.getOperands())
        if (auto t = dyn_cast<RankedTensorType>(v.getType()))
          if (isa<FloatType>(t.getElementType()))
            row.unitRoundoff = std::max(
                row.unitRoundoff, limitsOf(interp::elemTypeOf(t)).unitRoundoff);
      rowOf[{&op, row.result}] = report.rows.size();
      report.rows.push_back(std::move(row));
    }
  }
}

LogicalResult Auditor::addBatch(const interp::NamedTensors &inputs,
                                const interp::NamedTensors &weights) {
  std::vector<Tensor> args;
  for (unsigned k = 0; k < gradFunc.getNumArguments(); ++k) {
    auto in = gradFunc.getArgAttrOfType<StringAttr>(k, graph::kInputAttr);
    auto p = gradFunc.getArgAttrOfType<StringAttr>(k, graph::kParamAttr);
    const interp::NamedTensors *from = in ? &inputs : p ? &weights : nullptr;
    if (from) {
      StringRef name = in ? in.getValue() : p.getValue();
      auto it = from->find(name.str());
      if (it == from->end())
        return gradFunc.emitError()
               << "no value for " << (in ? "input" : "parameter") << " '"
               << name << "'";
      args.push_back(it->second);
    } else if (gradFunc.getArgAttr(k, graph::kLossScaleAttr)) {
      args.push_back(Tensor::scalar(options.lossScale));
    } else if (gradFunc.getArgAttr(k, graph::kBufferAttr)) {
      // Running statistics: the training form (batch statistics) reads none.
      auto type = cast<RankedTensorType>(gradFunc.getArgument(k).getType());
      args.push_back(Tensor(interp::Shape(type.getShape().begin(),
                                          type.getShape().end()),
                            interp::ElemType::F32));
    } else {
      return gradFunc.emitError() << "argument #" << k
                                  << " has no graph.input, graph.param or "
                                     "graph.loss_scale attribute";
    }
  }

  interp::InterpOptions typedOpts;
  typedOpts.numerics = interp::Numerics::Typed;
  typedOpts.seed = options.seed;
  typedOpts.step = options.step;
  interp::InterpOptions fp64Opts = typedOpts;
  fp64Opts.numerics = interp::Numerics::FP64;
  interp::Interpreter typed(typedOpts), fp64(fp64Opts);
  interp::ModelValues ampVals, refVals;
  auto ampOut = typed.runFunction(gradFunc, args, &ampVals);
  if (failed(ampOut))
    return failure();
  auto refOut = fp64.runFunction(gradFunc, args, &refVals);
  if (failed(refOut))
    return failure();
  for (unsigned k = 0; k < gradFunc.getNumResults(); ++k)
    if (auto o =
            gradFunc.getResultAttrOfType<StringAttr>(k, graph::kOutputAttr))
      if (o.getValue() == "loss") {
        lossAmpSum += (*ampOut)[k].at(0);
        lossRefSum += (*refOut)[k].at(0);
      }

  Block &body = gradFunc.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (llvm::none_of(op.getResults(), [&](OpResult r) {
          return rowOf.count({&op, r.getResultNumber()});
        }))
      continue;
    // The op alone: FP64 operands rounded to the op's operand types.
    std::vector<Tensor> operands;
    for (Value v : op.getOperands()) {
      Tensor t = refVals.values.lookup(v);
      interp::roundTensor(t, interp::Numerics::Typed);
      operands.push_back(std::move(t));
    }
    auto local = typed.runOp(&op, operands);
    if (failed(local))
      return failure();
    for (OpResult r : op.getResults()) {
      auto it = rowOf.find({&op, r.getResultNumber()});
      if (it == rowOf.end())
        continue;
      OpRow &row = report.rows[it->second];
      ElemType et = resultType(row);
      const Tensor &ref = refVals.values[r];
      row.acc.add(ampVals.values[r], ref, et);
      row.local.add((*local)[r.getResultNumber()], ref, et);
      if (row.backward && isHalf(et)) {
        double floor = ValueStats::significanceFloor(ref, et);
        for (double x : ref.f)
          if (std::fabs(x) >= floor)
            gradients.add(std::fabs(x) / options.lossScale);
      }
    }
  }
  ++report.batches;
  return success();
}

namespace {

// `pin fp32: NAME` (or FILE:LINE:COL) and the attribute that does the same.
std::string pinAdvice(Operation *op) {
  amp::OpSite site = amp::siteOf(op->getLoc());
  std::string target = site.name.empty() ? site.position(true) : site.name;
  return "pin it to FP32: policy line `pin fp32: " + target +
         "` (--policy FILE), or `{precision = \"fp32\"}` on the op at " +
         site.position(false);
}

// The ops a cast feeds, which run in its type because of it.
std::string castConsumersAdvice(Operation *cast) {
  std::string out;
  llvm::StringSet<> seen;
  for (Operation *user : cast->getResult(0).getUsers()) {
    if (isa<func::ReturnOp>(user))
      continue;
    amp::OpSite site = amp::siteOf(user->getLoc());
    std::string target = site.name.empty() ? site.position(true) : site.name;
    if (!seen.insert(target).second)
      continue;
    if (!out.empty())
      out += " ";
    out += target;
  }
  if (out.empty())
    return "";
  return "pin the ops that read it to FP32: policy line `pin fp32: " + out +
         "` (--policy FILE)";
}

std::string fmt(double x, int digits = 3) {
  return llvm::formatv("{0}", llvm::format("%.*g", digits, x)).str();
}

} // namespace

AuditReport Auditor::finish() {
  if (report.batches) {
    report.lossAmp = lossAmpSum / double(report.batches);
    report.lossRef = lossRefSum / double(report.batches);
  }
  // The loss-scale range, from the unscaled half gradient magnitudes.
  ScaleAdvice &sa = report.scale;
  TypeLimits half = limitsOf(halfType);
  sa.values = gradients.total();
  sa.maxUnscaled = gradients.maxMagnitude();
  int64_t under = 0, nonzero = 0;
  for (const OpRow &row : report.rows)
    if (row.backward && isHalf(resultType(row))) {
      sa.overflow += row.acc.rangeOverflow;
      under += row.acc.rangeUnderflow;
      nonzero += row.acc.significant;
    }
  sa.underflowFraction = nonzero ? double(under) / double(nonzero) : 0.0;
  if (sa.values > 0) {
    int hi = int(std::floor(std::log2(half.max / sa.maxUnscaled)));
    while (std::ldexp(sa.maxUnscaled, hi) > half.max)
      --hi;
    int lo = hi + 1;
    for (int s = -1200; s <= hi; ++s)
      if (double(gradients.belowAtScale(s, half.minNormalExp)) <=
          kScaleUnderflowTolerance * double(sa.values)) {
        lo = s;
        break;
      }
    sa.hasRange = lo <= hi;
    sa.lo = lo;
    sa.hi = hi;
    sa.scaleInRange = sa.hasRange && sa.scale >= std::ldexp(1.0, lo) &&
                      sa.scale <= std::ldexp(1.0, hi);
  }

  // The verdict on each op comes from what it does alone (its FP64 values
  // against its type's range, its own error), so an inf or a flushed zero
  // is blamed on the op that made it, not on everything after.
  for (OpRow &row : report.rows) {
    ElemType et = resultType(row);
    const char *tn = interp::toString(et);
    std::optional<double> localMed = row.local.medianRelErr();
    // Ops that only move values in their operand's type make none of them.
    if (isa<graph::ReshapeOp, graph::TransposeOp, graph::BroadcastToOp,
            graph::SliceOp, graph::ConcatOp>(row.op) &&
        llvm::all_of(row.op->getOperandTypes(),
                     [&](Type t) { return interp::elemTypeOf(t) == et; }))
      continue;
    if (row.acc.rangeOverflow > 0) {
      row.risk = Risk::Overflow;
      row.why = llvm::formatv("overflows {0} in {1}% of its values (max |x| "
                              "{2}, {0} limit {3})",
                              tn, fmt(100 * row.acc.rangeOverflowFraction()),
                              fmt(row.acc.maxAbsRef), fmt(row.limit, 8))
                    .str();
    } else if (row.acc.rangeUnderflowFraction() > kUnderflowRisk) {
      row.risk = Risk::Underflow;
      row.why = llvm::formatv("{0}% of its significant values underflow {1} "
                              "(below {2})",
                              fmt(100 * row.acc.rangeUnderflowFraction()), tn,
                              fmt(limitsOf(et).minNormal))
                    .str();
    } else if (localMed && *localMed > kLocalErrorRisk * row.unitRoundoff) {
      row.risk = Risk::Precision;
      row.why = llvm::formatv("adds a median relative error of {0} by itself "
                              "({1} unit roundoffs of its least precise type)",
                              fmt(*localMed), fmt(*localMed / row.unitRoundoff))
                    .str();
    } else {
      continue;
    }
    bool scaleRisk = row.backward && row.risk != Risk::Precision;
    if (scaleRisk && sa.hasRange && !sa.scaleInRange)
      row.fix =
          llvm::formatv("use a loss scale in [2^{0}, 2^{1}] (audited at {2})",
                        sa.lo, sa.hi, fmt(sa.scale, 8))
              .str();
    else if (isa<graph::CastOp>(row.op))
      row.fix = castConsumersAdvice(row.op);
    else
      row.fix = pinAdvice(row.op);
    if (scaleRisk && !(sa.hasRange && !sa.scaleInRange))
      row.fix = (sa.hasRange ? "its values span more than the loss scale "
                               "that suits the other gradients lets " +
                                   std::string(tn) + " hold; "
                             : "no loss scale keeps every gradient "
                               "representable; ") +
                row.fix;
  }

  for (size_t k = 0; k < report.rows.size(); ++k)
    if (report.rows[k].risk != Risk::None)
      report.ranked.push_back(k);
  auto key = [&](size_t k) {
    const OpRow &r = report.rows[k];
    double severity = r.risk == Risk::Overflow ? r.acc.rangeOverflowFraction()
                      : r.risk == Risk::Underflow
                          ? r.acc.rangeUnderflowFraction()
                          : r.local.medianRelErr().value_or(0) / r.unitRoundoff;
    // Forward before backward: a forward overflow often causes the
    // backward one.
    return std::make_tuple(int(r.risk), !r.backward, severity);
  };
  std::stable_sort(report.ranked.begin(), report.ranked.end(),
                   [&](size_t a, size_t b) { return key(a) > key(b); });
  return report;
}
