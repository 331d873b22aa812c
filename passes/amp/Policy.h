//===- Policy.h - The AMP autocast policy as data ---------------*- C++ -*-===//
//
// Which precision each graph op kind runs in under autocast: the category of
// every op (lower / fp32 / promote / follow), the default lists that mirror
// PyTorch's CUDA autocast, pins by op name or source location, and the parser
// of policy files (format: docs/amp-policy.md). Shared by the graph-autocast
// pass and `ampc explain`; it knows op names, not op classes, so it needs no
// MLIR context.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_AMP_POLICY_H
#define AMPC_PASSES_AMP_POLICY_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace ampc::amp {

// Attributes the pass puts on every op it decides: the precision the op runs
// in ("fp32", "fp16", "bf16"; integer-only ops: their element type) and the
// rule that decided it (docs/amp-policy.md lists the strings).
inline constexpr llvm::StringLiteral kPrecisionAttr = "amp.precision";
inline constexpr llvm::StringLiteral kRuleAttr = "amp.rule";

enum class Category {
  Lower,   // run in the half type (GEMM-shaped ops)
  FP32,    // run in FP32 whatever the inputs (range/precision sensitive)
  Promote, // run in the widest float input type
  Follow,  // run in the type of the first float input
};

// "lower", "fp32", "promote", "follow" (the policy file keywords).
llvm::StringRef categoryKeyword(Category c);

// The precision a pin asks for; Half means "the mode's half type".
enum class PinPrecision { FP32, FP16, BF16, Half };
std::optional<PinPrecision> parsePinPrecision(llvm::StringRef s);
llvm::StringRef pinPrecisionName(PinPrecision p);

// Where an op's category came from: the default table (with its group, e.g.
// "gemm") or a policy file line.
struct OpRule {
  Category category;
  std::string group;      // default table group ("gemm", "normalization", ...)
  unsigned policyLine = 0; // policy file line, 0 for the default table
};

// A pin from a policy file: an op name (NameLoc / SSA result name) or a
// source location FILE:LINE[:COL] (FILE matches as a path suffix).
struct Pin {
  PinPrecision precision;
  unsigned policyLine;
  std::string name;     // set for a name pin
  std::string file;     // set for a location pin
  unsigned line = 0, col = 0; // col 0: any column
  unsigned policyCol = 0;     // the target's column in the policy file
  // The target as written in the policy file.
  std::string text() const;
  bool matchesName(llvm::StringRef n) const { return !name.empty() && name == n; }
  bool matchesLoc(llvm::StringRef f, unsigned l, unsigned c) const;
};

class Policy {
public:
  // PyTorch CUDA autocast's lists over the graph dialect's ops.
  static Policy defaults();
  // Every op name a policy may mention (without the "graph." prefix).
  static llvm::ArrayRef<llvm::StringRef> knownOps();

  // Parses a policy file's text. On error returns nullopt and sets |error| to
  // a message and |errLine|/|errCol| to its position (1-based).
  static std::optional<Policy> parse(llvm::StringRef text, std::string &error,
                                     unsigned &errLine, unsigned &errCol);

  // The rule for an op name ("graph.softmax" or "softmax"), or null when the
  // policy does not list it.
  const OpRule *lookup(llvm::StringRef opName) const;
  llvm::ArrayRef<Pin> pins() const { return pinList; }

  // Prints the effective policy, one category per line, in file syntax.
  void print(llvm::raw_ostream &os) const;

private:
  void set(llvm::StringRef op, OpRule rule);
  llvm::StringMap<OpRule> rules;
  std::vector<Pin> pinList;
};

// Strips a leading "graph." from an op name.
llvm::StringRef shortOpName(llvm::StringRef opName);

// "fp32", "fp16", "bf16" for a float element type; the type itself otherwise.
std::string precisionName(mlir::Type t);
// The element type as MLIR prints it ("f32", "f16", "bf16", "i64").
std::string typeName(mlir::Type t);

} // namespace ampc::amp

#endif
