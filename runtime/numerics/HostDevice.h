//===- HostDevice.h - AMPC_HD, callable on host and device ------*- C++ -*-===//
//
// The one definition of AMPC_HD, the qualifier of every numerics function
// that CUDA kernels call too (generated kernels, runtime/cuda): __host__
// __device__ under nvcc, nothing for a plain C++ compiler.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_NUMERICS_HOSTDEVICE_H
#define AMPC_RUNTIME_NUMERICS_HOSTDEVICE_H

#ifdef __CUDACC__
#define AMPC_HD __host__ __device__
#else
#define AMPC_HD
#endif

#endif
