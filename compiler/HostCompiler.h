//===- HostCompiler.h - Compile generated C++ into a binary -----*- C++ -*-===//
#ifndef AMPC_COMPILER_HOSTCOMPILER_H
#define AMPC_COMPILER_HOSTCOMPILER_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace ampc {

// The host compiler command that turns |cppPath| into the training binary
// |binPath|: `<the build's C++ compiler> -O2 -std=c++20 -ffp-contract=off
// -I<ampc source root>` and the runtime's link line (from the build, see
// cmake/AmpcRuntimeLink.cmake). Environment overrides: AMPC_CXX (the
// compiler), AMPC_INCLUDE_DIR (the ampc source root), AMPC_RUNTIME_DIR (a
// directory holding libampc_runtime.a, libampc_cpu_kernels.a,
// libampc_numerics.a). Returns an empty vector and sets |error| when no
// runtime is known. |sanitize| is a -fsanitize list ("address,undefined")
// for the generated code; see sanitizerFlags. Where the compiler, the headers
// and the options are the build's own, the command -includes the runtime
// headers the build precompiled (cmake/AmpcHostPch.cmake).
std::vector<std::string> hostCompileCommand(llvm::StringRef cppPath,
                                            llvm::StringRef binPath,
                                            llvm::StringRef sanitize,
                                            std::string &error);

// The nvcc command that turns the generated CUDA C++ |cuPath| into the
// training binary |binPath| for the GPU architectures |archs| ("80,90";
// empty: the build's AMPC_CUDA_ARCHS): nvcc -O1 (host code) -std=c++20, one
// -gencode (the oldest architecture's PTX, as SASS for each listed GPU and
// as PTX for later ones; the build's CUDA library is compiled the same way),
// the runtime's link line and the CUDA kernel library's. Environment
// overrides: AMPC_NVCC, AMPC_INCLUDE_DIR. Empty with |error| set when this
// ampc was built without the CUDA library.
std::vector<std::string> cudaCompileCommand(llvm::StringRef cuPath,
                                            llvm::StringRef binPath,
                                            llvm::StringRef archs,
                                            llvm::StringRef sanitize,
                                            std::string &error);

// The sanitizers a training binary is built with: |requested| (a -fsanitize
// list, may be empty) joined with the ones this ampc's runtime was built with
// (-DAMPC_SANITIZE), which the binary must have to link the instrumented
// runtime. Empty when none.
std::vector<std::string> effectiveSanitizers(llvm::StringRef requested);

// Runs |command|; the compiler's own messages go to stderr. Returns its exit
// code (-1 when it could not be started, with |error| set).
int runCommand(const std::vector<std::string> &command, std::string &error);

} // namespace ampc

#endif
