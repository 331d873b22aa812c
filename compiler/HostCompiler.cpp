//===- HostCompiler.cpp - Invoke c++ on generated code ---------------------===//
#include "compiler/HostCompiler.h"

#include "compiler/RuntimeConfig.inc"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace llvm;

static std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

// The runtime's link line: the build's, with the ampc libraries taken from
// AMPC_RUNTIME_DIR when it is set.
static std::vector<std::string> runtimeLink(std::string &error) {
  static const char *const ampcLibs[] = {"libampc_runtime.a",
                                         "libampc_plot.a",
                                         "libampc_cpu_kernels.a",
                                         "libampc_kernel_abi.a",
                                         "libampc_numerics.a"};
  std::string dir = env("AMPC_RUNTIME_DIR");
  SmallVector<StringRef> items;
  StringRef(AMPC_RUNTIME_LINK).split(items, '|', -1, /*KeepEmpty=*/false);
  std::vector<std::string> link;
  if (items.empty()) {
    if (dir.empty()) {
      error = "this ampc was built without the runtime libraries; set "
              "AMPC_RUNTIME_DIR to the directory holding libampc_runtime.a, "
              "libampc_cpu_kernels.a, libampc_kernel_abi.a and "
              "libampc_numerics.a";
      return {};
    }
    // No build information: the libraries and their usual dependencies.
    for (const char *lib : ampcLibs)
      link.push_back((Twine(dir) + "/" + lib).str());
    // (Debian absl 20220623: the flags libraries and what they pull in.)
    static const char *const usual[] = {
        "-lopenblas", "-labsl_flags_parse", "-labsl_flags_usage",
        "-labsl_flags_usage_internal", "-labsl_flags_internal",
        "-labsl_flags_marshalling", "-labsl_flags_reflection",
        "-labsl_flags_config", "-labsl_flags_program_name",
        "-labsl_flags_private_handle_accessor", "-labsl_flags_commandlineflag",
        "-labsl_flags_commandlineflag_internal", "-labsl_bad_optional_access",
        "-labsl_bad_variant_access", "-labsl_raw_logging_internal",
        "-labsl_log_severity", "-labsl_strings", "-labsl_strings_internal",
        "-labsl_str_format_internal", "-labsl_base", "-labsl_spinlock_wait",
        "-labsl_int128", "-labsl_throw_delegate", "-labsl_synchronization",
        "-labsl_graphcycles_internal", "-labsl_malloc_internal", "-labsl_time",
        "-labsl_civil_time", "-labsl_time_zone", "-labsl_stacktrace",
        "-labsl_debugging_internal", "-labsl_symbolize",
        "-labsl_demangle_internal", "-labsl_cord", "-labsl_cord_internal",
        "-labsl_cordz_functions", "-labsl_exponential_biased",
        "-labsl_cordz_info", "-labsl_cordz_handle", "-labsl_hash",
        "-labsl_city", "-labsl_low_level_hash", "-labsl_raw_hash_set",
        "-labsl_hashtablez_sampler", "-lz"};
    for (const char *lib : usual)
      link.push_back(lib);
    return link;
  }
  for (StringRef item : items) {
    StringRef file = sys::path::filename(item);
    if (!dir.empty() && llvm::is_contained(ampcLibs, file))
      link.push_back((Twine(dir) + "/" + file).str());
    else
      link.push_back(item.str());
  }
  return link;
}

std::vector<std::string> ampc::effectiveSanitizers(StringRef requested) {
  std::vector<std::string> out;
  for (StringRef list : {StringRef(AMPC_BUILD_SANITIZE), requested}) {
    SmallVector<StringRef> items;
    list.split(items, ',', -1, /*KeepEmpty=*/false);
    for (StringRef item : items)
      if (!llvm::is_contained(out, item.trim()))
        out.push_back(item.trim().str());
  }
  return out;
}

// The host compiler flags for |sanitize| (as CMakeLists.txt sets them for
// the runtime): fatal on the first error, frame pointers and line tables
// for readable reports.
static std::vector<std::string> sanitizerFlags(StringRef sanitize) {
  std::vector<std::string> names = ampc::effectiveSanitizers(sanitize);
  if (names.empty())
    return {};
  std::vector<std::string> flags = {"-g1", "-fno-omit-frame-pointer",
                                    "-fno-sanitize-recover=all"};
  for (const std::string &name : names)
    flags.push_back("-fsanitize=" + name);
  return flags;
}

// Whether the precompiled runtime headers exist and were made with
// exactly |flags|: Clang stops on a mismatched one, and GCC does not always
// notice (made at -O1, used at -O2, it crashed).
static bool hostPchUsable(ArrayRef<std::string> flags) {
  StringRef header(AMPC_HOST_PCH);
  if (header.empty() || llvm::join(flags, "|") != AMPC_HOST_PCH_FLAGS)
    return false;
  return sys::fs::exists(header + ".gch") || sys::fs::exists(header + ".pch");
}

std::vector<std::string> ampc::hostCompileCommand(StringRef cppPath,
                                                  StringRef binPath,
                                                  StringRef sanitize,
                                                  std::string &error) {
  std::vector<std::string> link = runtimeLink(error);
  if (link.empty())
    return {};
  std::string cxx = env("AMPC_CXX");
  if (cxx.empty())
    cxx = AMPC_BUILD_CXX;
  std::string include = env("AMPC_INCLUDE_DIR");
  if (include.empty())
    include = AMPC_SOURCE_DIR;
  // -O2 without -march: the binary runs on any x86-64 like the build host.
  // -ffp-contract=off: no FMA contraction, so the generated loops compute
  // exactly the formulas the reference interpreter computes.
  // AMPC_VECTORIZE_FLAGS (-fno-trapping-math, -fno-math-errno, and GCC's
  // -fvect-cost-model=cheap): the fused elementwise loops vectorize (both
  // sides of a select may be computed; a runtime check covers buffers that
  // may alias). None changes a value: no reassociation, and nothing reads
  // the floating-point exception flags or errno.
  std::vector<std::string> cmd = {cxx, "-O2", "-std=c++20", "-ffp-contract=off"};
  for (StringRef flag : llvm::split(StringRef(AMPC_VECTORIZE_FLAGS), '|'))
    if (!flag.empty())
      cmd.push_back(flag.str());
  // F16C, AVX2 and AVX-512 where the build machine has them (same results,
  // faster);
  // see AMPC_HOST_ISA_FLAGS in CMakeLists.txt.
  SmallVector<StringRef> isa;
  StringRef(AMPC_HOST_ISA_FLAGS).split(isa, '|', -1, /*KeepEmpty=*/false);
  cmd.insert(cmd.begin() + 1, isa.begin(), isa.end());
  std::vector<std::string> san = sanitizerFlags(sanitize);
  cmd.insert(cmd.begin() + 1, san.begin(), san.end());
  // The runtime headers precompiled by the build (cmake/AmpcHostPch.cmake),
  // where this compile is the one they were made for: the build's compiler
  // and headers, the same options. The header is the generated file's own
  // first include, so the program is the same either way.
  if (cxx == AMPC_BUILD_CXX && include == AMPC_SOURCE_DIR &&
      hostPchUsable(ArrayRef(cmd).drop_front())) {
    cmd.push_back("-Winvalid-pch"); // GCC: say so if it cannot use it
    cmd.push_back("-include");
    cmd.push_back(AMPC_HOST_PCH);
  }
  for (std::string arg : {"-I" + include, cppPath.str(), std::string("-o"),
                          binPath.str(), std::string("-Wl,--start-group")})
    cmd.push_back(std::move(arg));
  cmd.insert(cmd.end(), link.begin(), link.end());
  cmd.push_back("-Wl,--end-group");
  cmd.push_back("-lpthread");
  return cmd;
}

std::vector<std::string> ampc::cudaCompileCommand(StringRef cuPath,
                                                  StringRef binPath,
                                                  StringRef archs,
                                                  StringRef sanitize,
                                                  std::string &error) {
  SmallVector<StringRef> cudaItems;
  StringRef(AMPC_CUDA_LINK).split(cudaItems, '|', -1, /*KeepEmpty=*/false);
  std::string nvcc = env("AMPC_NVCC");
  if (nvcc.empty())
    nvcc = AMPC_NVCC;
  if (cudaItems.empty() || nvcc.empty()) {
    error = "this ampc was built without the CUDA kernel library "
            "(AMPC_WITH_CUDA=OFF or no nvcc); --target=cuda needs it";
    return {};
  }
  std::vector<std::string> link = runtimeLink(error);
  if (link.empty())
    return {};
  std::string include = env("AMPC_INCLUDE_DIR");
  if (include.empty())
    include = AMPC_SOURCE_DIR;
  // nvcc's -O is the host code's level (device code is optimized fully
  // either way). The generated host code only enqueues launches, and GCC's
  // -O3 on a deep model's step function took twice -O1's time (GPT-2
  // small: 67 s against 32 s of CPU) for no runtime gain.
  std::vector<std::string> cmd = {nvcc, "-O1", "-std=c++20",
                                  "--expt-relaxed-constexpr",
                                  "--cudart", "shared",
                                  // unused preamble helpers
                                  "-diag-suppress", "177", "-I" + include};
  // Host code only; nvcc splits -Xcompiler values at commas, so one each.
  for (const std::string &flag : sanitizerFlags(sanitize))
    cmd.push_back("-Xcompiler=" + flag);
  // One virtual architecture, the oldest listed, compiled to SASS for each
  // listed GPU, plus its PTX for later ones: nvcc's front end (cicc) runs
  // once instead of once per architecture, and only ptxas runs per GPU.
  // Nothing here needs a newer architecture's PTX instructions.
  SmallVector<StringRef> list;
  (archs.empty() ? StringRef(AMPC_CUDA_ARCHS) : archs)
      .split(list, ',', -1, /*KeepEmpty=*/false);
  for (StringRef &a : list)
    a = a.trim();
  if (!list.empty()) {
    StringRef oldest = *llvm::min_element(list, [](StringRef a, StringRef b) {
      return std::atoi(a.str().c_str()) < std::atoi(b.str().c_str());
    });
    std::string code = "code=[";
    for (StringRef a : list)
      code += "sm_" + a.str() + ",";
    code += "compute_" + oldest.str() + "]";
    cmd.push_back("-gencode");
    cmd.push_back("arch=compute_" + oldest.str() + "," + code);
  }
  cmd.insert(cmd.end(), {cuPath.str(), "-o", binPath.str(), "-Xlinker",
                         "--start-group"});
  // nvcc passes linker flags through -Xlinker, comma-separated; library
  // files too (it rejects names like libabsl_x.so.20220623.0.0).
  auto add = [&](StringRef item) {
    if (item.consume_front("-Wl,") || sys::path::is_absolute(item)) {
      cmd.push_back("-Xlinker");
      cmd.push_back(item.str());
    } else {
      cmd.push_back(item.str());
    }
  };
  std::string dir = env("AMPC_RUNTIME_DIR");
  for (StringRef item : cudaItems) {
    if (!dir.empty() && sys::path::filename(item) == "libampc_cuda_kernels.a")
      add((Twine(dir) + "/libampc_cuda_kernels.a").str());
    else
      add(item);
  }
  for (const std::string &item : link)
    add(item);
  cmd.insert(cmd.end(), {"-Xlinker", "--end-group", "-lpthread"});
  return cmd;
}

int ampc::runCommand(const std::vector<std::string> &command,
                     std::string &error) {
  ErrorOr<std::string> program = sys::findProgramByName(command[0]);
  if (!program) {
    error = "cannot find the host compiler '" + command[0] + "'";
    return -1;
  }
  SmallVector<StringRef> args(command.begin(), command.end());
  std::string msg;
  int rc = sys::ExecuteAndWait(*program, args, std::nullopt, {}, 0, 0, &msg);
  if (rc < 0)
    error = "could not run " + command[0] + ": " + msg;
  return rc;
}
