//===- Shape.cu - reshape, transpose, slice, concat, broadcast_to ---------===//
//
// Pure data movement, as runtime/cpu/Shape.cpp: elements are copied bit for
// bit, whatever the type, by one strided-copy kernel (embedding is in
// Embedding.cu).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"

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

__global__ void stridedCopyKernel(Copy c, int64_t n) {
  AMPC_GRID_STRIDE(i, n) {
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
}

// Copies the elements of the box |dims| from x (strides src, element offset
// xBase) to y (strides dst, offset yBase).
void stridedCopy(const TensorRef &like, const void *x, int64_t xBase,
                 const int64_t *src, void *y, int64_t yBase, const int64_t *dst,
                 const int64_t *dims, int rank, cudaStream_t stream) {
  Copy c{};
  c.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    c.dims[d] = dims[d], c.src[d] = src[d], c.dst[d] = dst[d];
    n *= dims[d];
  }
  c.esz = int(dtypeSize(like.dtype));
  c.x = static_cast<const char *>(x) + xBase * c.esz;
  c.y = static_cast<char *>(y) + yBase * c.esz;
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

// Checks every operand before the first copy is enqueued.
void concatKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.concat";
  const TensorRef &y = required(op, out, 0);
  int axis = kernels::detail::concatGeometry(op, in, y, attrs).axis;
  int64_t ys[kMaxRank], offset = 0;
  strides(y, ys);
  for (const TensorRef &x : in) {
    int64_t xs[kMaxRank];
    strides(x, xs);
    stridedCopy(x, x.data, 0, xs, y.data, offset * ys[axis], ys, x.shape,
                x.rank, stream);
    offset += x.shape[axis];
  }
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
