//===- BlasCore.h - OpenBLAS's kernels on CPUs newer than it knows -*- C++ -*-===//
//
// OpenBLAS (a DYNAMIC_ARCH build, as Debian's) picks its kernels once, as it
// loads, from the CPU's family and model. A CPU newer than its table gets
// no match, and OpenBLAS then falls back to kernels of twenty years ago:
// Debian 12's 0.3.21 does not know Intel's Emerald Rapids (family 6, model
// 207) and ran its Prescott (SSE3) kernels there, on which gpt_tiny's FP32
// step took 47.0 ms against 16.0 on its SkylakeX kernels (bench/cpu.sh).
// OPENBLAS_CORETYPE chooses the kernels, but only as OpenBLAS loads, before
// main(): so a CPU training binary's main() asks OpenBLAS what it chose
// and, on such a fallback, starts itself again with the variable set.
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
// them: kernels that need neither AVX2 nor FMA (Prescott, Barcelona, ...)
// on a CPU with both are replaced by SkylakeX (AVX-512) or Haswell. A CPU
// OpenBLAS knows keeps its choice.
std::string betterBlasCore(std::string_view chosen, CpuIsa isa);

// The first call of a CPU training binary's main(), before the model
// allocates anything or reads data. Unless OPENBLAS_CORETYPE is set (the
// user's choice, or this is the second run), and when betterBlasCore(...)
// is not "", executes the binary's file again with the same |argv|, pid and
// environment plus OPENBLAS_CORETYPE; the second run prints one note
// (rank 0 only). Returns when nothing is to change, when the binary was
// started through the dynamic loader (a note says which OPENBLAS_CORETYPE
// to set), or when the execution failed (a warning; training goes on).
void useFastBlasKernels(char **argv);

} // namespace ampc::cpu

#endif
