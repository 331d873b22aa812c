//===- Report.h - The precision placement report of `ampc explain` -*- C++ -*-===//
//
// Reads the amp.precision / amp.rule attributes and the graph.cast ops that
// graph-autocast left in a model and presents them: a table, JSON, or a
// Graphviz picture. Changes nothing in the IR.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_AMP_REPORT_H
#define AMPC_COMPILER_AMP_REPORT_H

#include "dialects/Graph/GraphOps.h"

#include <string>
#include <vector>

namespace ampc {

struct PrecisionRow {
  std::string loc;      // file:line:col, file as in the IR
  std::string shortLoc; // base name of the file
  std::string op;       // "layer_norm"
  std::string name;     // SSA/NameLoc name, or ""
  std::string precision;
  std::string rule;
  double flops = 0;
};

struct CastRow {
  std::string from, to; // "f32", "f16", "bf16"
  std::string source;   // what is cast: `fc1.weight (param)`, `h1 (linear)`
  std::string loc;
  int64_t elements = 0, bytes = 0; // bytes of the cast's result
  bool weightCopy = false;         // a half copy of a parameter
};

struct PrecisionReport {
  std::string model, mode, policy;
  std::vector<PrecisionRow> ops;
  std::vector<CastRow> casts;
  // Summary.
  int opsHalf = 0, opsFP32 = 0, opsOther = 0;
  double flopsHalf = 0, flopsFP32 = 0;
  int weightCopies = 0;
  int64_t weightCopyBytes = 0;
};

// Builds the report of a model graph-autocast has run on.
PrecisionReport buildPrecisionReport(graph::ModelOp model, llvm::StringRef mode,
                                     llvm::StringRef policy);

void printPrecisionText(const PrecisionReport &report, llvm::raw_ostream &os);
void printPrecisionJson(const PrecisionReport &report, llvm::raw_ostream &os);
// Graphviz: ops coloured by precision, casts drawn as labelled edges.
void printPrecisionDot(graph::ModelOp model, llvm::raw_ostream &os);

} // namespace ampc

#endif
