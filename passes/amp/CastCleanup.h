//===- CastCleanup.h - Fold and merge graph.cast ops ------------*- C++ -*-===//
#ifndef AMPC_PASSES_AMP_CASTCLEANUP_H
#define AMPC_PASSES_AMP_CASTCLEANUP_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Types.h"

namespace ampc::amp {

// Returns true if every value of element type |from| is exactly
// representable in |to| (f16 -> f32, bf16 -> f32, or equal types).
bool isExactConversion(mlir::Type from, mlir::Type to);

// Tidies the casts of one block (a graph.model body):
//  - cast(cast(x : A -> B) -> C) with A -> B exact becomes cast(x : A -> C),
//    which is the same value since B holds x exactly; with C == A it is x
//    (f16 -> f32 -> f16 folds; f32 -> f16 -> f32 rounds and stays);
//  - casts to their own type disappear;
//  - casts of one value to one type merge into the first;
//  - unused casts are erased.
// Returns the number of casts removed.
unsigned cleanupCasts(mlir::Block &block);

} // namespace ampc::amp

#endif
