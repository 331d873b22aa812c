//===- CudaEmitter.h - Print a training program as CUDA C++ -----*- C++ -*-===//
//
// The CUDA target's emitter: prints one .cu file that implements
// ampc::rt::Model (runtime/Model.h) on the device, for a module that went
// through the training pipeline (compiler/Pipeline.h). Read-only, like the
// CPU emitter: fused elementwise regions become __global__ kernels, other
// ops calls into runtime/cuda (cuBLASLt GEMMs, norms, losses, ...), the
// memory plan one device arena, train.fused_epilogue the two multi-tensor
// kernels of runtime/cuda/Epilogue.h. forwardBackward() and step() are each
// captured once into a CUDA graph and replayed; no host sync inside a step.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_CUDA_CUDAEMITTER_H
#define AMPC_COMPILER_TARGETS_CUDA_CUDAEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc {

// Prints the CUDA C++ of |module|'s training program to |os|.
mlir::LogicalResult emitCudaTrainingProgram(mlir::ModuleOp module,
                                            llvm::raw_ostream &os);

// Registers `--ampc-emit-cuda` for ampc-translate.
void registerCudaEmitterTranslation();

} // namespace ampc

#endif
