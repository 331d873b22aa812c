// Which OpenBLAS kernels a CPU training binary asks for (runtime/cpu/
// BlasCore.h): only OpenBLAS's fallback for a CPU it does not know is
// replaced, by the newest kernels the CPU runs.
#include "runtime/cpu/BlasCore.h"

#include <gtest/gtest.h>

namespace {

using ampc::cpu::betterBlasCore;
using ampc::cpu::CpuIsa;

TEST(BlasCore, FallbackReplacedByWhatTheCpuRuns) {
  // Intel models and AMD families OpenBLAS does not know, and the kernels
  // it takes where the OS lacks the AVX state.
  for (const char *chosen : {"Prescott", "Barcelona", "Nehalem", "Sandybridge"}) {
    EXPECT_EQ(betterBlasCore(chosen, CpuIsa{true, true}), "SkylakeX") << chosen;
    EXPECT_EQ(betterBlasCore(chosen, CpuIsa{true, false}), "Haswell") << chosen;
    // An old CPU (or an OS without the AVX state): the choice is right.
    EXPECT_EQ(betterBlasCore(chosen, CpuIsa{false, false}), "") << chosen;
  }
}

TEST(BlasCore, KnownCpuKeepsItsKernels) {
  for (const char *chosen :
       {"Haswell", "Zen", "SkylakeX", "Cooperlake", "Excavator", "Unknown"})
    EXPECT_EQ(betterBlasCore(chosen, CpuIsa{true, true}), "") << chosen;
  EXPECT_EQ(betterBlasCore("", CpuIsa{true, true}), "");
}

TEST(BlasCore, HostIsaIsConsistent) {
  // The SkylakeX kernels' instructions include AVX2 and FMA.
  CpuIsa isa = ampc::cpu::hostIsa();
  if (isa.avx512)
    EXPECT_TRUE(isa.avx2Fma);
}

} // namespace
