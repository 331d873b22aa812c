//===- CpuEmitter.h - Print a training program as C++ -----------*- C++ -*-===//
//
// The CPU target's emitter: prints one C++ file with a subclass of
// ampc::cpu::HostModel (runtime/cpu/HostModel.h) for a module that went
// through the training pipeline (passes/Pipelines.h), plus the binary's
// main(). It only prints what depends on the model (its spec, the forward
// and backward bodies, kernel calls): everything it needs (fused loops, the
// memory plan, the fused epilogue) was prepared by passes, and the fixed
// code is the runtime's.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_CPU_CPUEMITTER_H
#define AMPC_COMPILER_TARGETS_CPU_CPUEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc {

// Prints the C++ of |module|'s training program to |os|. Reports a
// diagnostic and fails on IR the pipeline should not have left (unfused
// epilogue ops, ops without a memory plan, unknown ops).
mlir::LogicalResult emitCpuTrainingProgram(mlir::ModuleOp module,
                                           llvm::raw_ostream &os);

// Registers `--ampc-emit-cpu` for ampc-translate.
void registerCpuEmitterTranslation();

} // namespace ampc

#endif
