//===- CostModel.h - Launches, bytes and FLOPs of kernel-level ops -*- C++ -*-===//
//
// The one place that says what each kernel-level op costs when it runs: the
// launches the target makes for it (runtime/cuda/*.cu, the CUDA emitter,
// DeviceModel, the epilogue), and for each launch the bytes it reads and
// writes in device memory and its FLOPs. When a kernel changes (a fused
// norm, flash attention, a GEMM epilogue), its rule here changes with it.
//
// Bytes are each tensor's footprint once (a broadcast operand counts its own
// size, a row read twice by one block counts once): what a kernel must move
// with perfect caching inside itself, nothing between kernels.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_COST_COSTMODEL_H
#define AMPC_COMPILER_COST_COSTMODEL_H

#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace ampc::cost {

enum class Kind {
  Gemm,       // cuBLASLt / cuDNN library call (tensor cores for half)
  Fused,      // a generated kernel.fused_elementwise kernel
  Runtime,    // a kernel of the runtime library (norms, losses, copies...)
  Epilogue,   // the fused optimizer epilogue's passes
  Collective, // data-parallel all-reduce (--world-size > 1)
  Copy,       // cudaMemcpyAsync / cudaMemsetAsync (graph nodes, not kernels)
};
llvm::StringRef kindName(Kind kind);

struct Launch {
  std::string name;  // the kernel as launched ("fused_3", "normRows", ...)
  Kind kind = Kind::Runtime;
  std::string op;    // what it comes from ("graph.linear", "storeGrad", ...)
  std::string where; // the IR value or parameter, for people
  double bytesRead = 0, bytesWritten = 0, flops = 0;
  // Bytes this rank sends over the interconnect (a collective; it receives
  // as many).
  double linkBytes = 0;
  // Ring steps of a collective (2 (W-1) for an all-reduce of W ranks): each
  // adds a protocol's step latency (LinkProtocol).
  int64_t linkSteps = 0;
  bool halfMath = false; // FLOPs run on half tensor cores (half GEMMs)
  // A cublasLtMatmul with a matrix whose rows are not a multiple of 16
  // bytes: cuBLASLt cannot use its TMA kernels (sm90) for it; the roofline
  // does not say so.
  bool misaligned = false;
  int64_t count = 1;     // launches per training step (micro-batches)
};

enum class Target { Cuda, Cpu };

// Names generated kernels as the emitter does (@m_grad's launches first).
struct RuleState {
  Target target = Target::Cuda;
  int nextFused = 0;
  // The emitted kernel names of the fused launches, in order; empty:
  // fused_<nextFused>.
  llvm::ArrayRef<std::string> fusedNames;
};

// Appends the launches of one op of @m_grad's body (nothing for aliases,
// inputs and parameters).
void appendLaunches(mlir::Operation *op, RuleState &state,
                    std::vector<Launch> &out);

// A launch the runtime makes around @m_grad's ops (DeviceModel's hand-over,
// the epilogue, the all-reduce), counted |count| times a step.
Launch hostLaunch(std::string name, std::string op, std::string where,
                  Kind kind, double read, double written, double flops,
                  int64_t count);

// Bytes of a ranked tensor value (i1 counts one byte, as stored).
double tensorBytes(mlir::Value v);

} // namespace ampc::cost

#endif
