//===- KernelOps.h - The kernel level ---------------------------*- C++ -*-===//
#ifndef AMPC_DIALECTS_KERNEL_KERNELOPS_H
#define AMPC_DIALECTS_KERNEL_KERNELOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Kernel/KernelDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Kernel/KernelOps.h.inc"

namespace ampc::kernel {

// The memory plan, written by kernel-plan-memory on each planned op and on
// the function (or graph.model) holding it.
// On an op: one arena byte offset per result; -1 means the result needs no
// storage of its own (it aliases its operand, e.g. a reshape).
inline constexpr llvm::StringLiteral kOffsetsAttr = "kernel.offsets";
// On the function: bytes of the arena with buffers reused by liveness, and
// what it would take without reuse.
inline constexpr llvm::StringLiteral kArenaSizeAttr = "kernel.arena_size";
inline constexpr llvm::StringLiteral kArenaNoReuseAttr =
    "kernel.arena_size_no_reuse";

// True for graph ops a fused elementwise loop can compute: one scalar
// function of their operands' elements, results in the loop's shape.
bool isFusableElementwise(mlir::Operation *op);

} // namespace ampc::kernel

#endif
