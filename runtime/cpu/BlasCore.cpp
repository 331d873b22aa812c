//===- BlasCore.cpp - OpenBLAS's kernels on CPUs newer than it knows ------===//
#include "runtime/cpu/BlasCore.h"

#include <cblas.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ampc::cpu {
namespace {

// Set for the second run: the kernels OpenBLAS chose in the first.
constexpr const char *kFallbackVar = "AMPC_OPENBLAS_FALLBACK";

// OpenBLAS's kernels that need neither AVX2 nor FMA (driver/others/
// dynamic.c). It falls back to them on a CPU its table lacks (Prescott for
// an Intel model, Barcelona for an AMD family) or an OS without the AVX
// state; a CPU that runs AVX2 and FMA, as libgcc checks it (with the OS's
// state), is on them only by that first fallback.
constexpr std::string_view kPreAvx2Cores[] = {
    "Katmai",    "Coppermine", "Northwood", "Prescott",  "Banias",
    "Atom",      "Core2",      "Penryn",    "Dunnington", "Nehalem",
    "Athlon",    "Opteron",    "Opteron_SSE3", "Barcelona", "Nano",
    "Sandybridge", "Bobcat",   "Bulldozer", "Piledriver", "Steamroller"};

// "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": its first two words.
std::string openBlasVersion() {
  std::string v = openblas_get_config();
  if (size_t sp = v.find(' ', v.find(' ') + 1); sp != std::string::npos)
    v.resize(sp);
  return v;
}

// One note for a data-parallel job, not one per rank.
bool firstRank() {
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *r = std::getenv(v); r && std::strcmp(r, "0") != 0)
      return false;
  return true;
}

// The file this process runs, for execv: its own name keeps the process's
// name (ps, pgrep), which /proc/self/exe would make "exe". "" when the
// binary was started through the dynamic loader (ld-linux-x86-64.so.2
// ./model ...), where running the file again would run the loader alone.
std::string selfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "/proc/self/exe";
  std::string path(buf, size_t(n));
  std::string_view base = std::string_view(path).substr(path.rfind('/') + 1);
  if (base.substr(0, 3) == "ld-" && base.find(".so") != std::string_view::npos)
    return "";
  constexpr std::string_view deleted = " (deleted)";
  if (path.size() > deleted.size() &&
      std::string_view(path).substr(path.size() - deleted.size()) == deleted)
    return "/proc/self/exe"; // replaced or removed since it started
  return path;
}

} // namespace

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
  bool fallback = false;
  for (std::string_view c : kPreAvx2Cores)
    fallback |= chosen == c;
  if (!fallback || !isa.avx2Fma)
    return "";
  return isa.avx512 ? "SkylakeX" : "Haswell";
}

void useFastBlasKernels(char **argv) {
  if (const char *asked = std::getenv("OPENBLAS_CORETYPE")) {
    // The second run says what happened, once, now that it is so.
    if (const char *was = std::getenv(kFallbackVar)) {
      std::string first = was;
      unsetenv(kFallbackVar);
      const char *now = openblas_get_corename();
      if (firstRank())
        std::fprintf(stderr,
                     "note: %s does not know this CPU and chose its %s "
                     "kernels; running on its %s kernels "
                     "(OPENBLAS_CORETYPE=%s; set OPENBLAS_CORETYPE to "
                     "choose)\n",
                     openBlasVersion().c_str(), first.c_str(), now, asked);
    }
    return;
  }
  // AMPC_TEST_OPENBLAS_CORE stands for OpenBLAS's choice, so that tests take
  // this path on any CPU with AVX2 (test/e2e/blas-core.test).
  const char *test = std::getenv("AMPC_TEST_OPENBLAS_CORE");
  std::string chosen = test ? test : openblas_get_corename();
  std::string core = betterBlasCore(chosen, hostIsa());
  if (core.empty())
    return;
  std::string self = selfPath();
  if (self.empty()) {
    if (firstRank())
      std::fprintf(stderr,
                   "note: %s does not know this CPU and chose its %s "
                   "kernels; OPENBLAS_CORETYPE=%s would run its faster %s "
                   "kernels\n",
                   openBlasVersion().c_str(), chosen.c_str(), core.c_str(),
                   core.c_str());
    return;
  }
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  setenv(kFallbackVar, chosen.c_str(), 1);
  execv(self.c_str(), argv);
  // Still here: no /proc, say. Train on the kernels OpenBLAS chose.
  int err = errno;
  std::fprintf(stderr,
               "warning: %s chose its %s kernels; could not start again on "
               "its %s kernels (%s: %s)\n",
               openBlasVersion().c_str(), chosen.c_str(), core.c_str(),
               self.c_str(), std::strerror(err));
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kFallbackVar);
}

} // namespace ampc::cpu
