//===- Dot.cpp - Graphviz picture of the precision placement ---------------===//
//
// Nodes: inputs and parameters (grey), ops filled by precision, outputs.
// graph.cast ops are not nodes: each use of a cast value is an edge from
// the uncast value's producer to the user, labelled with the conversion.
//
//===----------------------------------------------------------------------===//
#include "compiler/amp/Report.h"

#include "passes/amp/OpSite.h"
#include "passes/amp/Policy.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace ampc;

namespace {

StringRef fillFor(StringRef precision) {
  if (precision == "fp16")
    return "#a6e3a1"; // green
  if (precision == "bf16")
    return "#89c4f4"; // blue
  if (precision == "fp32")
    return "#f9c784"; // orange
  return "#e0e0e0";
}

std::string escape(StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

} // namespace

void ampc::printPrecisionDot(graph::ModelOp model, raw_ostream &os) {
  llvm::DenseMap<Operation *, std::string> ids;
  os << "digraph \"" << escape(model.getSymName()) << "\" {\n"
     << "  rankdir=TB;\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
        "fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9];\n";

  int next = 0;
  for (Operation &op : model.getBlock()) {
    if (isa<graph::CastOp, graph::OutputOp>(op))
      continue;
    std::string id = "n" + std::to_string(next++);
    ids[&op] = id;
    os << "  " << id << " [";
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      os << "shape=ellipse, fillcolor=\"#ffffff\", label=\"input\\n"
         << escape(in.getName()) << "\\n" << amp::typeName(graph::elementTypeOf(in)) << "\"";
    } else if (auto p = dyn_cast<graph::ParamOp>(op)) {
      os << "shape=note, fillcolor=\"#eeeeee\", label=\"param\\n"
         << escape(p.getName()) << "\\n" << amp::typeName(graph::elementTypeOf(p)) << "\"";
    } else {
      auto precision = op.getAttrOfType<StringAttr>(amp::kPrecisionAttr);
      auto rule = op.getAttrOfType<StringAttr>(amp::kRuleAttr);
      StringRef prec = precision ? precision.getValue() : "";
      amp::OpSite site = amp::siteOf(op.getLoc());
      os << "fillcolor=\"" << fillFor(prec) << "\", label=\""
         << escape(amp::shortOpName(op.getName().getStringRef()));
      if (!site.name.empty())
        os << " " << escape(site.name);
      os << "\\n" << (prec.empty() ? "?" : prec) << "\"";
      if (rule)
        os << ", tooltip=\"" << escape(rule.getValue()) << " ("
           << escape(site.position(true)) << ")\"";
    }
    os << "];\n";
  }

  // An edge per use; casts (possibly chained) become the edge's label.
  auto edge = [&](Value v, StringRef to) {
    std::string label;
    while (auto c = v.getDefiningOp<graph::CastOp>()) {
      std::string step = amp::typeName(graph::elementTypeOf(c.getInput())) + "\u2192";
      label = label.empty() ? step + amp::typeName(graph::elementTypeOf(c.getResult()))
                            : step + label;
      v = c.getInput();
    }
    Operation *def = v.getDefiningOp();
    if (!def || !ids.count(def))
      return;
    os << "  " << ids[def] << " -> " << to;
    if (!label.empty())
      os << " [label=\"" << label
         << "\", color=\"#c0392b\", fontcolor=\"#c0392b\", style=bold]";
    os << ";\n";
  };
  for (Operation &op : model.getBlock()) {
    if (isa<graph::CastOp>(op))
      continue;
    if (auto out = dyn_cast<graph::OutputOp>(op)) {
      for (auto [name, value] : llvm::zip(out.getNames(), out.getValues())) {
        std::string id = "out_" + cast<StringAttr>(name).getValue().str();
        os << "  \"" << escape(id) << "\" [shape=doubleoctagon, "
           << "fillcolor=\"#ffffff\", label=\"output\\n"
           << escape(cast<StringAttr>(name).getValue()) << "\\n"
           << amp::typeName(graph::elementTypeOf(value)) << "\"];\n";
        edge(value, "\"" + escape(id) + "\"");
      }
      continue;
    }
    for (Value operand : op.getOperands())
      edge(operand, ids[&op]);
  }

  os << "  subgraph cluster_legend {\n"
     << "    label=\"precision\"; fontname=\"Helvetica\"; fontsize=10;\n"
     << "    legend_fp16 [label=\"fp16\", fillcolor=\"" << fillFor("fp16")
     << "\"];\n"
     << "    legend_bf16 [label=\"bf16\", fillcolor=\"" << fillFor("bf16")
     << "\"];\n"
     << "    legend_fp32 [label=\"fp32\", fillcolor=\"" << fillFor("fp32")
     << "\"];\n"
     << "  }\n"
     << "}\n";
}
