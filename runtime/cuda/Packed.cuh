//===- Packed.cuh - Packed loads and stores of 8 or 4 elements --*- C++ -*-===//
//
// Eight consecutive elements as floats: one 16-byte load for f16/bf16, two
// for f32, when the caller checked alignment (packedOk); element loads of
// the first n otherwise. Four (ld4/st4): one access of 16 or 8 bytes. Both ways give the same floats, so a kernel's
// arithmetic (and its result) does not depend on which one ran. Used by the
// fused norms (Norm.cu) and the AMP epilogue (Epilogue.cu).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_PACKED_CUH
#define AMPC_RUNTIME_CUDA_PACKED_CUH

#include "runtime/cuda/Common.cuh"

#include <cstdint>

namespace ampc::cuda::detail {

constexpr int kPack = 8; // elements per packed access

// Host: whether |p| (with every row or chunk a multiple of kPack elements
// from it) may be read and written in packed accesses.
inline bool packedOk(const void *p, DType dt) {
  return (dt == DType::F32 || dt == DType::F16 || dt == DType::BF16) &&
         reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

__device__ __forceinline__ float halfBits(uint32_t bits, int dt) {
  unsigned short s = static_cast<unsigned short>(bits);
  return dt == int(DType::F16) ? __half2float(__ushort_as_half(s))
                               : __bfloat162float(__ushort_as_bfloat16(s));
}

__device__ __forceinline__ uint32_t bitsOf(float v, int dt) {
  return dt == int(DType::F16) ? __half_as_ushort(__float2half_rn(v))
                               : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

// v[0..8) = p[i..i+8) (packed), or the first |n| of them (the rest 0).
__device__ __forceinline__ void ld8(const void *p, int dt, int64_t i,
                                    bool packed, int n, float (&v)[kPack]) {
  if (packed) {
    if (dt == int(DType::F32)) {
      const float4 *q =
          reinterpret_cast<const float4 *>(static_cast<const float *>(p) + i);
      float4 a = q[0], b = q[1];
      v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
      v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
      return;
    }
    uint4 u = *reinterpret_cast<const uint4 *>(
        static_cast<const unsigned short *>(p) + i);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      v[2 * k] = halfBits(w[k] & 0xffffu, dt);      // little endian: the
      v[2 * k + 1] = halfBits(w[k] >> 16, dt);      // lower address first
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kPack; ++k)
    v[k] = k < n ? ld(p, dt, i + k) : 0.0f;
}

// p[i..i+8) = v (packed, each rounded once), or the first |n| of them.
__device__ __forceinline__ void st8(void *p, int dt, int64_t i, bool packed,
                                    int n, const float (&v)[kPack]) {
  if (packed) {
    if (dt == int(DType::F32)) {
      float4 *q = reinterpret_cast<float4 *>(static_cast<float *>(p) + i);
      q[0] = make_float4(v[0], v[1], v[2], v[3]);
      q[1] = make_float4(v[4], v[5], v[6], v[7]);
      return;
    }
    uint4 u;
    u.x = bitsOf(v[0], dt) | (bitsOf(v[1], dt) << 16);
    u.y = bitsOf(v[2], dt) | (bitsOf(v[3], dt) << 16);
    u.z = bitsOf(v[4], dt) | (bitsOf(v[5], dt) << 16);
    u.w = bitsOf(v[6], dt) | (bitsOf(v[7], dt) << 16);
    *reinterpret_cast<uint4 *>(static_cast<unsigned short *>(p) + i) = u;
    return;
  }
#pragma unroll
  for (int k = 0; k < kPack; ++k)
    if (k < n)
      st(p, dt, i + k, v[k]);
}

// FP32 master weights and moments: always float, packed as two float4.
__device__ __forceinline__ void ld8f(const float *p, int64_t i, bool packed,
                                     int n, float (&v)[kPack]) {
  ld8(p, int(DType::F32), i, packed, n, v);
}
__device__ __forceinline__ void st8f(float *p, int64_t i, bool packed, int n,
                                     const float (&v)[kPack]) {
  st8(p, int(DType::F32), i, packed, n, v);
}

// Four consecutive elements, aligned (packedOk, |i| a multiple of 4): one
// 16-byte access for FP32, one 8-byte access for f16/bf16. A warp's 32
// threads taking consecutive fours touch one contiguous span (every sector
// whole), where ld8's two float4 per thread leave each half-used per access.
constexpr int kGroup = 4;

// Streaming accesses (ld.global.cs / st.global.cs, evict first) when
// |Stream|: data touched once per step need not displace what L2 holds.
template <bool Stream, class T> __device__ __forceinline__ T ldv(const T *p) {
  if constexpr (Stream)
    return __ldcs(p);
  else
    return *p;
}
template <bool Stream, class T> __device__ __forceinline__ void stv(T *p, T v) {
  if constexpr (Stream)
    __stcs(p, v);
  else
    *p = v;
}

template <bool Stream = false>
__device__ __forceinline__ void ld4(const void *p, int dt, int64_t i,
                                    float (&v)[kGroup]) {
  if (dt == int(DType::F32)) {
    float4 a = ldv<Stream>(
        reinterpret_cast<const float4 *>(static_cast<const float *>(p) + i));
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    return;
  }
  uint2 u = ldv<Stream>(reinterpret_cast<const uint2 *>(
      static_cast<const unsigned short *>(p) + i));
  v[0] = halfBits(u.x & 0xffffu, dt), v[1] = halfBits(u.x >> 16, dt);
  v[2] = halfBits(u.y & 0xffffu, dt), v[3] = halfBits(u.y >> 16, dt);
}

template <bool Stream = false>
__device__ __forceinline__ void st4(void *p, int dt, int64_t i,
                                    const float (&v)[kGroup]) {
  if (dt == int(DType::F32)) {
    stv<Stream>(reinterpret_cast<float4 *>(static_cast<float *>(p) + i),
                make_float4(v[0], v[1], v[2], v[3]));
    return;
  }
  uint2 u;
  u.x = bitsOf(v[0], dt) | (bitsOf(v[1], dt) << 16);
  u.y = bitsOf(v[2], dt) | (bitsOf(v[3], dt) << 16);
  stv<Stream>(reinterpret_cast<uint2 *>(static_cast<unsigned short *>(p) + i), u);
}

// Warp-wide float sum, xor butterfly: every lane gets the same value.
__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

} // namespace ampc::cuda::detail

#endif
