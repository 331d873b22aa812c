//===- BlasCore.cpp - OpenBLAS's kernels on CPUs newer than it knows ------===//
#include "runtime/cpu/BlasCore.h"

#include <cblas.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ampc::cpu {

CpuIsa hostIsa() {
  CpuIsa isa;
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's checks include the OS's XSAVE state for the YMM/ZMM registers.
  __builtin_cpu_init();
  isa.avx2Fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  isa.avx512 = __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
#endif
  return isa;
}

std::string betterBlasCore(std::string_view chosen, CpuIsa isa) {
  // OpenBLAS's 64-bit x86 fallback when its table has no entry for the CPU
  // (driver/others/dynamic.c); a real Prescott has neither AVX2 nor FMA.
  if (chosen != "Prescott")
    return "";
  if (isa.avx512)
    return "SkylakeX";
  if (isa.avx2Fma)
    return "Haswell";
  return "";
}

void useFastBlasKernels(char **argv) {
  if (std::getenv("OPENBLAS_CORETYPE"))
    return;
  const char *chosen = openblas_get_corename();
  std::string core = betterBlasCore(chosen ? chosen : "", hostIsa());
  if (core.empty())
    return;
  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": its first two words.
  std::string version = openblas_get_config();
  if (size_t sp = version.find(' ', version.find(' ') + 1);
      sp != std::string::npos)
    version.resize(sp);
  std::fprintf(stderr,
               "note: %s does not know this CPU and chose its %s kernels; "
               "running on its %s kernels (OPENBLAS_CORETYPE=%s; set "
               "OPENBLAS_CORETYPE to choose)\n",
               version.c_str(), chosen, core.c_str(), core.c_str());
  std::fflush(stderr);
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  execv("/proc/self/exe", argv);
  // Still here: no /proc, say. Train on the kernels OpenBLAS chose.
  std::fprintf(stderr,
               "warning: could not start again with OPENBLAS_CORETYPE=%s "
               "(%s); training on OpenBLAS's %s kernels\n",
               core.c_str(), std::strerror(errno), chosen);
  unsetenv("OPENBLAS_CORETYPE");
}

} // namespace ampc::cpu
