//===- Shape.cu - reshape, transpose, slice, concat, broadcast_to ---------===//
//
// Pure data movement, as runtime/cpu/Shape.cpp: elements are copied bit for
// bit, whatever the type, by one strided-copy kernel (concat: one launch
// for all its inputs; embedding is in Embedding.cu).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"
#include "runtime/kernels/EnvSwitch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ampc::cuda {

using namespace detail;
using kernels::detail::StridedCopy;

namespace {

// y[i] (contiguous over |dims|) = x[base + sum c_d * s[d]], element size esz.
struct Copy {
  int rank;
  int64_t dims[kMaxRank], src[kMaxRank], dst[kMaxRank];
  const char *x;
  char *y;
  int esz;
};

// Element i (in the box's row-major order) of copy |c|.
__device__ __forceinline__ void copyElement(const Copy &c, int64_t i) {
  int64_t is = 0, id = 0, rem = i;
  for (int d = c.rank - 1; d >= 0; --d) {
    int64_t k = rem % c.dims[d];
    rem /= c.dims[d];
    is += k * c.src[d];
    id += k * c.dst[d];
  }
  switch (c.esz) {
  case 2:
    reinterpret_cast<uint16_t *>(c.y)[id] =
        reinterpret_cast<const uint16_t *>(c.x)[is];
    break;
  case 8:
    reinterpret_cast<uint64_t *>(c.y)[id] =
        reinterpret_cast<const uint64_t *>(c.x)[is];
    break;
  default:
    reinterpret_cast<uint32_t *>(c.y)[id] =
        reinterpret_cast<const uint32_t *>(c.x)[is];
  }
}

__global__ void stridedCopyKernel(Copy c, int64_t n) {
  AMPC_GRID_STRIDE(i, n) { copyElement(c, i); }
}

// Several copies in one launch (graph.concat's inputs into their slabs):
// blockIdx.y picks the copy. 8 copies keep the parameters well under the
// 4 KB a launch may pass.
constexpr int kMaxJoined = 8;
struct Copies {
  Copy c[kMaxJoined];
  int64_t n[kMaxJoined];
};

__global__ void stridedCopiesKernel(Copies cs) {
  const Copy &c = cs.c[blockIdx.y];
  AMPC_GRID_STRIDE(i, cs.n[blockIdx.y]) { copyElement(c, i); }
}

// The copy of the box |dims| from x (strides src, element offset xBase) to
// y (strides dst, offset yBase); sets |n| to its element count.
Copy makeCopy(const TensorRef &like, const void *x, int64_t xBase,
              const int64_t *src, void *y, int64_t yBase, const int64_t *dst,
              const int64_t *dims, int rank, int64_t &n) {
  Copy c{};
  c.rank = rank;
  n = 1;
  for (int d = 0; d < rank; ++d) {
    c.dims[d] = dims[d], c.src[d] = src[d], c.dst[d] = dst[d];
    n *= dims[d];
  }
  c.esz = int(dtypeSize(like.dtype));
  c.x = static_cast<const char *>(x) + xBase * c.esz;
  c.y = static_cast<char *>(y) + yBase * c.esz;
  return c;
}

// Copies the elements of the box |dims| from x (strides src, element offset
// xBase) to y (strides dst, offset yBase).
void stridedCopy(const TensorRef &like, const void *x, int64_t xBase,
                 const int64_t *src, void *y, int64_t yBase, const int64_t *dst,
                 const int64_t *dims, int rank, cudaStream_t stream) {
  int64_t n;
  Copy c = makeCopy(like, x, xBase, src, y, yBase, dst, dims, rank, n);
  if (n == 0)
    return;
  stridedCopyKernel<<<gridFor(n), 256, 0, stream>>>(c, n);
  checkLaunch("stridedCopyKernel");
}

// Runs one shared copy plan (runtime/kernels/Geometry.h) on x -> y.
void stridedCopy(const StridedCopy &c, const TensorRef &like, const void *x,
                 void *y, cudaStream_t stream) {
  stridedCopy(like, x, c.srcBase, c.src, y, c.dstBase, c.dst, c.dims, c.rank,
              stream);
}

} // namespace

void reshapeKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                   const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.reshape";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  kernels::detail::reshapeCheck(op, x, y);
  if (x.data != y.data)
    check(cudaMemcpyAsync(y.data, x.data,
                          size_t(x.numel()) * dtypeSize(x.dtype),
                          cudaMemcpyDeviceToDevice, stream),
          "reshape");
}

void transposeKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.transpose";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  stridedCopy(kernels::detail::transposeCopy(op, x, y, attrs), x, x.data,
              y.data, stream);
}

void sliceKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.slice";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  stridedCopy(kernels::detail::sliceCopy(op, x, y, attrs), x, x.data, y.data,
              stream);
}

void sliceBackwardKernel(std::span<const TensorRef> in,
                         std::span<const TensorRef> out, const Attrs &attrs,
                         cudaStream_t stream) {
  constexpr std::string_view op = "graph.slice_backward";
  const TensorRef &g = required(op, in, 0), &dx = required(op, out, 0);
  StridedCopy c = kernels::detail::sliceBackwardCopy(op, g, dx, attrs);
  check(cudaMemsetAsync(dx.data, 0,
                        size_t(dx.numel()) * dtypeSize(dx.dtype), stream),
        "slice_backward");
  stridedCopy(c, g, g.data, dx.data, stream);
}

// AMPC_CUDA_CONCAT: unset, "" or "joined": every input's copy in one
// launch (up to 8 inputs; more take one launch each); "copies": one launch
// per input, the path before (kept to isolate a difference on a GPU). Read
// at each call, so a test can run both.
static bool concatJoinedPath() {
  return kernels::envChoice("AMPC_CUDA_CONCAT", {"joined", "copies"}) == 0;
}

// Each input (transposed by the optional perm) into its slab of y; every
// operand is checked before the first copy is enqueued.
void concatKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.concat";
  const TensorRef &y = required(op, out, 0);
  std::vector<StridedCopy> copies =
      kernels::detail::concatCopies(op, in, y, attrs);
  if (copies.size() > size_t(kMaxJoined) || !concatJoinedPath()) {
    for (size_t i = 0; i < copies.size(); ++i)
      stridedCopy(copies[i], y, in[i].data, y.data, stream);
    return;
  }
  Copies cs{};
  int count = 0;
  int64_t most = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    const StridedCopy &p = copies[i];
    int64_t n;
    Copy c = makeCopy(y, in[i].data, p.srcBase, p.src, y.data, p.dstBase,
                      p.dst, p.dims, p.rank, n);
    if (n == 0)
      continue;
    cs.c[count] = c;
    cs.n[count++] = n;
    most = std::max(most, n);
  }
  if (count == 0)
    return;
  stridedCopiesKernel<<<dim3(gridFor(most), count), 256, 0, stream>>>(cs);
  checkLaunch("stridedCopiesKernel");
}

void broadcastToKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &,
                       cudaStream_t stream) {
  constexpr std::string_view op = "graph.broadcast_to";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  stridedCopy(kernels::detail::broadcastCopy(op, x, y), x, x.data, y.data,
              stream);
}

} // namespace ampc::cuda
