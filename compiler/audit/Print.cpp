//===- Print.cpp - Text, JSON and IR annotations of an audit --------------===//
#include "compiler/audit/Audit.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace ampc;
using namespace ampc::audit;

namespace {

std::string sci(std::optional<double> x) {
  if (!x)
    return "-";
  if (*x == 0)
    return "0";
  return llvm::formatv("{0:e1}", *x).str();
}

std::string g(double x, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string percentOf(double fraction) {
  if (fraction == 0)
    return "0";
  return 100 * fraction < 0.01 ? sci(100 * fraction) : g(100 * fraction);
}

std::string percent(int64_t part, int64_t whole) {
  if (part == 0 || whole == 0)
    return "0";
  return percentOf(double(part) / double(whole));
}

std::string pow2(int e) { return "2^" + std::to_string(e); }

std::string riskCell(const OpRow &r) {
  if (r.risk != Risk::None)
    return toString(r.risk);
  // Values that overflowed or underflowed upstream, not here.
  if (r.acc.overflow > 0)
    return "(inf in)";
  return "";
}

std::string scaleLine(const AuditReport &r) {
  const ScaleAdvice &s = r.scale;
  std::string out;
  llvm::raw_string_ostream os(out);
  if (s.values == 0) {
    os << "no gradient is held in " << r.mode << ": any loss scale will do";
    return out;
  }
  os << s.values << " significant " << r.mode << " values at loss scale "
     << g(s.scale, 6) << ": " << s.overflow << " overflow, "
     << percentOf(s.underflowFraction) << "% underflow; ";
  if (s.hasRange)
    os << "loss scales with no overflow and at most "
       << percentOf(kScaleUnderflowTolerance) << "% underflow: [" << pow2(s.lo)
       << ", " << pow2(s.hi) << "]"
       << (s.scaleInRange ? "" : " (the audited scale is outside)");
  else
    os << "no loss scale gives no overflow with at most "
       << percentOf(kScaleUnderflowTolerance)
       << "% underflow (the gradients span more than " << r.mode << " holds)";
  return out;
}

} // namespace

void ampc::audit::printAuditText(const AuditReport &r, raw_ostream &os) {
  os << "audit @" << r.model << ": " << r.mode << ", loss scale "
     << g(r.scale.scale, 6) << ", " << r.batches
     << (r.batches == 1 ? " batch" : " batches");
  if (!r.policy.empty())
    os << ", policy " << r.policy;
  os << "\n";
  os << "data:    " << r.data << "\n";
  os << "weights: " << r.weights << "\n";
  double lossErr = r.lossRef != 0
                       ? std::fabs(r.lossAmp - r.lossRef) / std::fabs(r.lossRef)
                       : std::fabs(r.lossAmp - r.lossRef);
  os << "loss:    " << g(r.lossAmp, 6) << " (" << r.mode << ") vs "
     << g(r.lossRef, 6) << " (FP64), relative error " << sci(lossErr) << "\n\n";

  std::vector<std::vector<std::string>> cells;
  cells.push_back({"location", "pass", "op", "name", "type", "ovf%", "unf%",
                   "max|x|/lim", "err med", "err max", "local med", "risk"});
  for (const OpRow &row : r.rows) {
    cells.push_back(
        {row.shortLoc, row.backward ? "bwd" : "fwd", row.opName,
         row.name.empty() ? "-" : row.name, row.type,
         percent(row.acc.overflow, row.acc.count),
         percent(row.acc.underflow, row.acc.nonzero),
         row.acc.maxAbsRef == 0
             ? std::string("0")
             : llvm::formatv("{0:e1}", row.acc.maxAbsRef / row.limit).str(),
         sci(row.acc.medianRelErr()),
         row.acc.compared ? sci(row.acc.maxRelErr) : "-",
         sci(row.local.medianRelErr()), riskCell(row)});
  }
  std::vector<size_t> width(cells.front().size(), 0);
  for (const auto &line : cells)
    for (size_t c = 0; c < line.size(); ++c)
      width[c] = std::max(width[c], line[c].size());
  for (const auto &line : cells) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) {
      text += line[c];
      if (c + 1 < line.size())
        text += std::string(width[c] - line[c].size() + 2, ' ');
    }
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    os << text << "\n";
  }

  os << "\ngradients: " << scaleLine(r) << "\n";
  if (r.ranked.empty()) {
    os << "at risk: none\n";
    return;
  }
  os << "at risk (" << r.ranked.size() << "), riskiest first:\n";
  for (size_t k : r.ranked) {
    const OpRow &row = r.rows[k];
    os << row.loc << ": warning: " << row.opName;
    if (!row.name.empty())
      os << " '" << row.name << "'";
    os << " (" << (row.backward ? "backward" : "forward") << "): " << row.why
       << "\n";
    if (!row.fix.empty())
      os << "  fix: " << row.fix << "\n";
  }
}

namespace {

// JSON has no inf or NaN: they are written as the strings "inf", "-inf",
// "nan" (an overflowing loss, an infinite error).
llvm::json::Value num(double x) {
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x > 0 ? "inf" : "-inf";
  return x;
}

llvm::json::Value optional(std::optional<double> x) {
  if (!x)
    return nullptr;
  return num(*x);
}

llvm::json::Object statsJson(const ValueStats &s) {
  return llvm::json::Object{
      {"count", s.count},
      {"nonzero", s.nonzero},
      {"overflow", s.overflow},
      {"underflow", s.underflow},
      {"overflow_fraction", num(s.overflowFraction())},
      {"underflow_fraction", num(s.underflowFraction())},
      {"max_abs", num(s.maxAbsRef)},
      {"compared", s.compared},
      {"rel_err_median", optional(s.medianRelErr())},
      {"rel_err_max",
       s.compared ? num(s.maxRelErr) : llvm::json::Value(nullptr)},
  };
}

} // namespace

void ampc::audit::printAuditJson(const AuditReport &r, raw_ostream &os) {
  llvm::json::Array ops, ranked;
  for (const OpRow &row : r.rows) {
    ops.push_back(llvm::json::Object{
        {"loc", row.loc},
        {"op", row.opName},
        {"name", row.name},
        {"type", row.type},
        {"precision", row.precision},
        {"pass", row.backward ? "backward" : "forward"},
        {"limit", num(row.limit)},
        {"max_abs_over_limit", num(row.acc.maxAbsRef / row.limit)},
        {"accumulated", statsJson(row.acc)},
        {"local", statsJson(row.local)},
        {"risk", toString(row.risk)},
        {"why", row.why},
        {"fix", row.fix},
    });
  }
  for (size_t k : r.ranked)
    ranked.push_back(int64_t(k));
  const ScaleAdvice &s = r.scale;
  llvm::json::Object scale{
      {"scale", num(s.scale)},
      {"values", s.values},
      {"overflow", s.overflow},
      {"underflow_fraction", num(s.underflowFraction)},
      {"max_unscaled", num(s.maxUnscaled)},
      {"underflow_tolerance", kScaleUnderflowTolerance},
      {"range", s.hasRange ? llvm::json::Value(llvm::json::Array{
                                 std::ldexp(1.0, s.lo), std::ldexp(1.0, s.hi)})
                           : llvm::json::Value(nullptr)},
      {"range_log2", s.hasRange ? llvm::json::Value(llvm::json::Array{
                                      int64_t(s.lo), int64_t(s.hi)})
                                : llvm::json::Value(nullptr)},
      {"scale_in_range", s.scaleInRange},
  };
  llvm::json::Value doc = llvm::json::Object{
      {"model", r.model},
      {"mode", r.mode},
      {"policy", r.policy},
      {"data", r.data},
      {"weights", r.weights},
      {"batches", r.batches},
      {"loss",
       llvm::json::Object{{"amp", num(r.lossAmp)}, {"fp64", num(r.lossRef)}}},
      {"ops", std::move(ops)},
      {"loss_scale", std::move(scale)},
      {"at_risk", std::move(ranked)},
  };
  os << llvm::formatv("{0:2}", doc) << "\n";
}

void ampc::audit::annotate(const AuditReport &r) {
  for (const OpRow &row : r.rows) {
    Builder b(row.op->getContext());
    auto f = [&](double x) { return b.getF64FloatAttr(x); };
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("risk", b.getStringAttr(toString(row.risk))),
        b.getNamedAttr("overflow", f(row.acc.overflowFraction())),
        b.getNamedAttr("underflow", f(row.acc.underflowFraction())),
        b.getNamedAttr("max_abs", f(row.acc.maxAbsRef)),
        b.getNamedAttr("limit", f(row.limit)),
        b.getNamedAttr("err_median", f(row.acc.medianRelErr().value_or(0))),
        b.getNamedAttr("err_max", f(row.acc.maxRelErr)),
        b.getNamedAttr("local_err_median",
                       f(row.local.medianRelErr().value_or(0))),
    };
    std::string key =
        row.result == 0 ? "audit" : "audit.result" + std::to_string(row.result);
    row.op->setAttr(key, b.getDictionaryAttr(attrs));
  }
}
