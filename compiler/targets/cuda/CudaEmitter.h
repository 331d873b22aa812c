//===- CudaEmitter.h - Print a training program as CUDA C++ -----*- C++ -*-===//
//
// The CUDA target's emitter: prints one .cu file defining a subclass of
// ampc::cuda::DeviceModel (runtime/cuda/DeviceModel.h), for a module that
// went through the training pipeline (passes/Pipelines.h). Read-only, like
// the CPU emitter: fused elementwise regions become __global__ kernels,
// other ops calls into runtime/cuda (cuBLASLt GEMMs, norms, losses, ...) on
// the memory plan's device arena. The base class owns the rest: storage,
// staging, the CUDA graphs forwardBackward() and step() are captured into,
// the fused epilogue (runtime/cuda/Epilogue.h), checkpoints.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_CUDA_CUDAEMITTER_H
#define AMPC_COMPILER_TARGETS_CUDA_CUDAEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ampc {

// Prints the CUDA C++ of |module|'s training program to |os|.
mlir::LogicalResult emitCudaTrainingProgram(mlir::ModuleOp module,
                                            llvm::raw_ostream &os);

// The kernel each fused region of the training step (@<model>_grad)
// launches, in launch order, named as the emitted file names them (regions
// with the same kernel text share one kernel). For reports that must name
// kernels as ncu will see them (`ampc cost`).
mlir::FailureOr<std::vector<std::string>>
cudaFusedKernelNames(mlir::ModuleOp module);

// Registers `--ampc-emit-cuda` for ampc-translate.
void registerCudaEmitterTranslation();

} // namespace ampc

#endif
