//===- UnmatchedPins.cpp - Policy pins that name no op --------------------===//
#include "passes/amp/UnmatchedPins.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <map>

using namespace llvm;

namespace ampc::amp {

namespace {
constexpr size_t kSuggestions = 3;

std::string join(ArrayRef<std::string> items) {
  std::string out;
  for (const std::string &s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The op names nearest |name| by edit distance (ties in model order).
std::vector<std::string> closestNames(StringRef name, ArrayRef<OpSite> sites) {
  std::vector<std::pair<unsigned, std::string>> scored;
  StringSet<> seen;
  for (const OpSite &s : sites)
    if (!s.name.empty() && seen.insert(s.name).second)
      scored.push_back({StringRef(s.name).edit_distance(name), s.name});
  std::stable_sort(scored.begin(), scored.end(),
                   [](auto &a, auto &b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto &[d, n] : scored) {
    if (out.size() == kSuggestions)
      break;
    out.push_back(n);
  }
  return out;
}

// The op positions of the pin's file nearest its line ("model.mlir:39:9").
std::vector<std::string> closestLines(const Pin &pin, ArrayRef<OpSite> sites) {
  std::multimap<unsigned, std::string> byDistance;
  for (const OpSite &s : sites) {
    if (s.line == 0)
      continue;
    Pin anyLine = pin;
    anyLine.line = s.line;
    anyLine.col = 0;
    if (!anyLine.matchesLoc(s.file, s.line, s.col))
      continue;
    unsigned d = s.line > pin.line ? s.line - pin.line : pin.line - s.line;
    byDistance.insert({d, s.position(/*baseName=*/true)});
  }
  std::vector<std::string> out;
  for (auto &[d, p] : byDistance) {
    if (out.size() == kSuggestions)
      break;
    if (!llvm::is_contained(out, p))
      out.push_back(p);
  }
  return out;
}
} // namespace

std::string unmatchedPinMessage(const Pin &pin, ArrayRef<OpSite> sites) {
  std::string msg = "pin '" + pin.text() + "' matches no op of the model";
  if (!pin.name.empty()) {
    std::vector<std::string> near = closestNames(pin.name, sites);
    if (near.empty())
      return msg + " (the model's ops have no names)";
    return msg + "; closest op names: " + join(near);
  }
  std::vector<std::string> near = closestLines(pin, sites);
  if (near.empty())
    return msg + " (no op of the model is in a file named '" + pin.file + "')";
  return msg + "; closest ops: " + join(near);
}

} // namespace ampc::amp
