//===- Flops.h - Rough FLOP counts of graph ops -----------------*- C++ -*-===//
#ifndef AMPC_COMPILER_AMP_FLOPS_H
#define AMPC_COMPILER_AMP_FLOPS_H

#include "mlir/IR/Operation.h"

namespace ampc {

// Estimated floating-point operations of one forward op, for `ampc explain`'s
// half-vs-FP32 split. GEMM-shaped ops count 2*M*N*K (plus the bias add);
// elementwise ops a small constant per result element; data movement
// (reshape, transpose, slice, concat, embedding, cast) counts 0. The GEMMs
// dominate every real model, so the small constants need not be exact.
double estimateFlops(mlir::Operation *op);

} // namespace ampc

#endif
