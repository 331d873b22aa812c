//===- UnmatchedPins.h - Policy pins that name no op ------------*- C++ -*-===//
//
// A policy-file pin that matches no op of the model is a mistake (a typo, a
// name the model does not have, a stale line number), not a no-op: the
// graph-autocast pass reports it with the names or lines closest to it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_AMP_UNMATCHEDPINS_H
#define AMPC_PASSES_AMP_UNMATCHEDPINS_H

#include "passes/amp/OpSite.h"
#include "passes/amp/Policy.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace ampc::amp {

// The error for |pin|, which matched none of |sites| (the model's ops):
// "pin 'prj' matches no op; closest names: proj, proj2" for a name pin (by
// edit distance), the nearest op lines of the same file for a location pin.
std::string unmatchedPinMessage(const Pin &pin, llvm::ArrayRef<OpSite> sites);

} // namespace ampc::amp

#endif
