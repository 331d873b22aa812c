//===- Report.cpp - Table and JSON of the precision placement --------------===//
#include "compiler/amp/Report.h"

#include "compiler/amp/Flops.h"
#include "passes/amp/OpSite.h"
#include "passes/amp/Policy.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace ampc;

namespace {

std::string attrString(Operation *op, StringRef name) {
  if (auto s = op->getAttrOfType<StringAttr>(name))
    return s.getValue().str();
  return "";
}

// What a value is, for people: `fc1.weight (param)`, `"image" (input)`,
// `h1 (linear)`.
std::string describe(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return "block argument";
  if (auto p = dyn_cast<graph::ParamOp>(def))
    return p.getName().str() + " (param)";
  if (auto in = dyn_cast<graph::InputOp>(def))
    return in.getName().str() + " (input)";
  std::string op = amp::shortOpName(def->getName().getStringRef()).str();
  amp::OpSite site = amp::siteOf(def->getLoc());
  if (!site.name.empty())
    return site.name + " (" + op + ")";
  return op + " at " + site.position(true);
}

bool isHalf(StringRef precision) {
  return precision == "fp16" || precision == "bf16";
}

std::string humanFlops(double f) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (f >= 1e9)
    os << llvm::format("%.2f GFLOP", f / 1e9);
  else if (f >= 1e6)
    os << llvm::format("%.2f MFLOP", f / 1e6);
  else if (f >= 1e3)
    os << llvm::format("%.2f kFLOP", f / 1e3);
  else
    os << llvm::format("%.0f FLOP", f);
  return s;
}

std::string humanBytes(int64_t b) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (b >= (1 << 20))
    os << llvm::format("%.2f MiB", b / double(1 << 20));
  else if (b >= (1 << 10))
    os << llvm::format("%.1f KiB", b / double(1 << 10));
  else
    os << b << " B";
  os << " (" << b << " bytes)";
  return s;
}

} // namespace

PrecisionReport ampc::buildPrecisionReport(graph::ModelOp model,
                                           StringRef mode, StringRef policy) {
  PrecisionReport r;
  r.model = model.getSymName().str();
  r.mode = mode.str();
  r.policy = policy.str();
  for (Operation &op : model.getBlock()) {
    if (auto c = dyn_cast<graph::CastOp>(op)) {
      CastRow row;
      row.from = amp::typeName(graph::elementTypeOf(c.getInput()));
      row.to = amp::typeName(graph::elementTypeOf(c.getResult()));
      row.source = describe(c.getInput());
      row.loc = amp::siteOf(c.getLoc()).position(true);
      auto type = cast<RankedTensorType>(c.getType());
      row.elements = type.getNumElements();
      row.bytes = row.elements * type.getElementTypeBitWidth() / 8;
      row.weightCopy = c.getInput().getDefiningOp<graph::ParamOp>() &&
                       (type.getElementType().isF16() ||
                        type.getElementType().isBF16());
      if (row.weightCopy) {
        ++r.weightCopies;
        r.weightCopyBytes += row.bytes;
      }
      r.casts.push_back(std::move(row));
      continue;
    }
    if (!op.hasAttr(amp::kPrecisionAttr))
      continue;
    PrecisionRow row;
    amp::OpSite site = amp::siteOf(op.getLoc());
    row.loc = site.position(false);
    row.shortLoc = site.position(true);
    row.op = amp::shortOpName(op.getName().getStringRef()).str();
    row.name = site.name;
    row.precision = attrString(&op, amp::kPrecisionAttr);
    row.rule = attrString(&op, amp::kRuleAttr);
    row.flops = estimateFlops(&op);
    if (isHalf(row.precision)) {
      ++r.opsHalf;
      r.flopsHalf += row.flops;
    } else if (row.precision == "fp32") {
      ++r.opsFP32;
      r.flopsFP32 += row.flops;
    } else {
      ++r.opsOther;
    }
    r.ops.push_back(std::move(row));
  }
  return r;
}

void ampc::printPrecisionText(const PrecisionReport &r, raw_ostream &os) {
  os << "model @" << r.model << ", autocast " << r.mode << ", policy: "
     << (r.policy.empty() ? std::string("default") : r.policy) << "\n\n";
  size_t wLoc = 8, wOp = 2, wName = 4;
  for (const PrecisionRow &row : r.ops) {
    wLoc = std::max(wLoc, row.shortLoc.size());
    wOp = std::max(wOp, row.op.size());
    wName = std::max(wName, row.name.size());
  }
  auto pad = [&](StringRef s, size_t w) {
    os << s;
    os.indent(w + 2 - s.size());
  };
  pad("location", wLoc);
  pad("prec", 4);
  pad("op", wOp);
  pad("name", wName);
  os << "rule\n";
  for (const PrecisionRow &row : r.ops) {
    pad(row.shortLoc, wLoc);
    pad(row.precision, 4);
    pad(row.op, wOp);
    pad(row.name.empty() ? "-" : row.name, wName);
    os << "rule: " << row.rule << "\n";
  }

  os << "\ncasts (" << r.casts.size() << "):\n";
  for (const CastRow &c : r.casts) {
    os << "  " << c.from << "->" << c.to << "  " << c.source << ", "
       << c.elements << " elements" << (c.weightCopy ? ", weight copy" : "")
       << "\n";
  }

  double total = r.flopsHalf + r.flopsFP32;
  auto percent = [&](double f) {
    return llvm::format("%.1f%%", total > 0 ? 100.0 * f / total : 0.0);
  };
  os << "\nsummary:\n";
  os << "  ops:    " << r.ops.size() << " (" << r.opsHalf << " half, "
     << r.opsFP32 << " fp32";
  if (r.opsOther)
    os << ", " << r.opsOther << " integer";
  os << ")\n";
  os << "  FLOPs:  " << humanFlops(r.flopsHalf) << " in half ("
     << percent(r.flopsHalf) << "), " << humanFlops(r.flopsFP32)
     << " in fp32 (" << percent(r.flopsFP32) << "), estimated per step, forward\n";
  os << "  casts:  " << r.casts.size() << "\n";
  os << "  half weight copies: " << r.weightCopies << ", "
     << humanBytes(r.weightCopyBytes) << "\n";
}

void ampc::printPrecisionJson(const PrecisionReport &r, raw_ostream &os) {
  llvm::json::Array ops, casts;
  for (const PrecisionRow &row : r.ops)
    ops.push_back(llvm::json::Object{{"op", row.op},
                                     {"name", row.name},
                                     {"loc", row.loc},
                                     {"precision", row.precision},
                                     {"rule", row.rule},
                                     {"flops", row.flops}});
  for (const CastRow &c : r.casts)
    casts.push_back(llvm::json::Object{{"from", c.from},
                                       {"to", c.to},
                                       {"source", c.source},
                                       {"loc", c.loc},
                                       {"elements", c.elements},
                                       {"bytes", c.bytes},
                                       {"weight_copy", c.weightCopy}});
  llvm::json::Object summary{
      {"ops", int64_t(r.ops.size())},
      {"ops_half", r.opsHalf},
      {"ops_fp32", r.opsFP32},
      {"ops_integer", r.opsOther},
      {"flops_half", r.flopsHalf},
      {"flops_fp32", r.flopsFP32},
      {"casts", int64_t(r.casts.size())},
      {"weight_copies", r.weightCopies},
      {"weight_copy_bytes", r.weightCopyBytes}};
  llvm::json::Value doc = llvm::json::Object{
      {"model", r.model},
      {"mode", r.mode},
      {"policy", r.policy.empty() ? std::string("default") : r.policy},
      {"ops", std::move(ops)},
      {"casts", std::move(casts)},
      {"summary", std::move(summary)}};
  os << llvm::formatv("{0:2}", doc) << "\n";
}
