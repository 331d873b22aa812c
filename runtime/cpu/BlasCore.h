//===- BlasCore.h - OpenBLAS's kernels on CPUs newer than it knows -*- C++ -*-===//
//
// OpenBLAS (a DYNAMIC_ARCH build, as Debian's) picks its kernels once, as it
// loads, from the CPU's family and model. A CPU newer than its table gets
// no match, and a 64-bit build then falls back to the Prescott kernels
// (SSE3, 2004). Debian 12's 0.3.21 does not know Intel's Emerald Rapids
// (family 6, model 207), on which gpt_tiny's FP32 step took 2.4x as long as
// on the SkylakeX kernels the CPU can run. OPENBLAS_CORETYPE chooses the
// kernels, but only as OpenBLAS loads, before main(): so the training
// binary's main() asks OpenBLAS what it chose and, when it fell back,
// starts itself again with the variable set.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_BLASCORE_H
#define AMPC_RUNTIME_CPU_BLASCORE_H

#include <string>
#include <string_view>

namespace ampc::cpu {

// What the CPU and the OS let kernels use.
struct CpuIsa {
  bool avx2Fma = false; // OpenBLAS's Haswell kernels
  bool avx512 = false;  // F, CD, BW, DQ, VL: its SkylakeX kernels
};

// The CPU this process runs on.
CpuIsa hostIsa();

// The OPENBLAS_CORETYPE to ask for when OpenBLAS chose the kernels named
// |chosen| (openblas_get_corename()) on a CPU with |isa|, or "" to keep
// them: only its unknown-CPU fallback, Prescott, is replaced, by the
// newest kernels the CPU runs. A CPU OpenBLAS knows keeps its choice.
std::string betterBlasCore(std::string_view chosen, CpuIsa isa);

// The first call of a CPU training binary's main(). Unless
// OPENBLAS_CORETYPE is set already (the user's choice, or this process
// started again), re-executes /proc/self/exe with |argv| and
// OPENBLAS_CORETYPE=betterBlasCore(...) when that is not "", after a
// one-line note on stderr. Returns when nothing is to change, or when the
// re-execution failed (with a warning; training goes on, slower).
void useFastBlasKernels(char **argv);

} // namespace ampc::cpu

#endif
