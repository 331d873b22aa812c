//===- NvrtcStubs.cpp - "NVRTC unavailable" for the cuDNN frontend --------===//
//
// The cuDNN frontend's experimental OSS engine (an sm100 RMSNorm+SiLU kernel
// our attention graphs never use) calls NVRTC. Answering "unavailable" here,
// instead of linking the toolkit's 109 MB libnvrtc into every CUDA binary,
// keeps the binaries' dependencies what they were (bench/gpu.sh BUNDLE=1
// copies each). Built only with the frontend (runtime/cuda/CMakeLists.txt).
//
// Hidden visibility: the stubs satisfy the frontend's references inside the
// binary or shared object that links this library, but are never exported,
// so they cannot interpose on a real libnvrtc that the user's code, or
// another library in the process, uses.
//
//===----------------------------------------------------------------------===//
#pragma GCC visibility push(hidden)
#include <nvrtc.h>

extern "C" {
nvrtcResult nvrtcCreateProgram(nvrtcProgram *, const char *, const char *, int,
                               const char *const *, const char *const *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcCompileProgram(nvrtcProgram, int, const char *const *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram, size_t *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram, char *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram, size_t *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram, char *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcGetPTXSize(nvrtcProgram, size_t *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
nvrtcResult nvrtcGetPTX(nvrtcProgram, char *) {
  return NVRTC_ERROR_INTERNAL_ERROR;
}
}

#pragma GCC visibility pop
