//===- OpSite.h - Where an op is in the model file --------------*- C++ -*-===//
#ifndef AMPC_PASSES_AMP_OPSITE_H
#define AMPC_PASSES_AMP_OPSITE_H

#include "mlir/IR/Location.h"

#include <string>

namespace ampc::amp {

// The parts of an op's location that users refer to: its name (a NameLoc,
// e.g. the SSA result name `ampc explain` records, or `loc("ln1")` in a
// model file) and its position in the model file. Either may be empty.
struct OpSite {
  std::string name;
  std::string file;
  unsigned line = 0, col = 0;
  // "file:line:col" with |file| reduced to its base name when |baseName|;
  // "?" when the location has no position.
  std::string position(bool baseName) const;
};

OpSite siteOf(mlir::Location loc);

} // namespace ampc::amp

#endif
