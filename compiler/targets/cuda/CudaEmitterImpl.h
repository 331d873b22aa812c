//===- CudaEmitterImpl.h - Pieces of the CUDA emitter -----------*- C++ -*-===//
#ifndef AMPC_COMPILER_TARGETS_CUDA_CUDAEMITTERIMPL_H
#define AMPC_COMPILER_TARGETS_CUDA_CUDAEMITTERIMPL_H

#include "compiler/targets/common/EmitSupport.h"
#include "compiler/targets/common/TargetSyntax.h"

#include "mlir/Support/IndentedOstream.h"

#include <map>
#include <string>
#include <vector>

namespace ampc::cuda_emit {

using emit::BlockEnv;
using emit::Program;

// How the CUDA target spells the shared pieces (CudaEmitBlock.cpp).
extern const emit::TargetSyntax kCudaSyntax;

// CUDA element type: float, __half, __nv_bfloat16, int32_t, ...
std::string cudaElementType(mlir::Type type);

// What printing function bodies collects for the file: the __global__
// kernels of the fused regions and the non-splat constants (copied to the
// device once, then into the arena by each step).
struct FileParts {
  std::string kernels;
  int nextKernel = 0;
  // Kernel text (around a placeholder name) -> its emitted name.
  std::map<std::string, std::string> kernelNames;
  // The kernel of every fused launch, in print order (the training step's
  // body first).
  std::vector<std::string> launched;
  struct Constant {
    std::string type, values; // "float", "{1.0f, 2.0f}"
    int64_t bytes = 0;
  };
  std::vector<Constant> constants;
};

// Prints the ops of |block| as launches on `stream()` (the caller names the
// block arguments in |env|).
mlir::LogicalResult emitCudaBlock(mlir::Block &block, BlockEnv &env,
                                  FileParts &parts,
                                  mlir::raw_indented_ostream &os);

} // namespace ampc::cuda_emit

#endif
