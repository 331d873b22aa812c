//===- CpuEmitterImpl.h - Pieces of the CPU emitter -------------*- C++ -*-===//
#ifndef AMPC_COMPILER_TARGETS_CPU_CPUEMITTERIMPL_H
#define AMPC_COMPILER_TARGETS_CPU_CPUEMITTERIMPL_H

#include "compiler/targets/common/EmitSupport.h"
#include "compiler/targets/common/TargetSyntax.h"

#include "mlir/Support/IndentedOstream.h"

namespace ampc::cpu_emit {

// How the CPU target spells the shared pieces (CpuEmitBlock.cpp).
extern const emit::TargetSyntax kCpuSyntax;

// Prints the ops of |block| (a function body or the graph.model body) as
// statements: fused loops, library calls, aliases, constants. Block
// arguments / graph.input / graph.param values must already be named in
// |env|; terminators are left to the caller.
mlir::LogicalResult emitBlock(mlir::Block &block, emit::BlockEnv &env,
                              mlir::raw_indented_ostream &os);

} // namespace ampc::cpu_emit

#endif
