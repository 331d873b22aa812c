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
using kernels::detail::SliceSpec;
using kernels::detail::sliceSpec;

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

void sameType(std::string_view op, const TensorRef &a, const TensorRef &b) {
  if (a.dtype != b.dtype)
    fail(op, "operand and result element types differ");
}

} // namespace

void reshapeKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                   const Attrs &, cudaStream_t stream) {
  constexpr std::string_view op = "graph.reshape";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  sameType(op, x, y);
  if (x.numel() != y.numel())
    fail(op, "element counts differ");
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
  sameType(op, x, y);
  auto perm = attrs.getInts("perm");
  if (int(perm.size()) != x.rank || y.rank != x.rank)
    fail(op, "perm must have one entry per dimension");
  int64_t xs[kMaxRank], ys[kMaxRank], ss[kMaxRank];
  strides(x, xs);
  strides(y, ys);
  for (int i = 0; i < x.rank; ++i) {
    if (perm[i] < 0 || perm[i] >= x.rank || y.shape[i] != x.shape[perm[i]])
      fail(op, "perm does not match the shapes");
    ss[i] = xs[perm[i]];
  }
  stridedCopy(x, x.data, 0, ss, y.data, 0, ys, y.shape, y.rank, stream);
}

void sliceKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.slice";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  sameType(op, x, y);
  SliceSpec s = sliceSpec(op, x, y, attrs);
  int64_t xs[kMaxRank], ys[kMaxRank], ss[kMaxRank], base = 0;
  strides(x, xs);
  strides(y, ys);
  for (int d = 0; d < x.rank; ++d) {
    base += s.starts[d] * xs[d];
    ss[d] = xs[d] * s.steps[d];
  }
  stridedCopy(x, x.data, base, ss, y.data, 0, ys, y.shape, y.rank, stream);
}

void sliceBackwardKernel(std::span<const TensorRef> in,
                         std::span<const TensorRef> out, const Attrs &attrs,
                         cudaStream_t stream) {
  constexpr std::string_view op = "graph.slice_backward";
  const TensorRef &g = required(op, in, 0), &dx = required(op, out, 0);
  sameType(op, g, dx);
  SliceSpec s = sliceSpec(op, dx, g, attrs);
  check(cudaMemsetAsync(dx.data, 0,
                        size_t(dx.numel()) * dtypeSize(dx.dtype), stream),
        "slice_backward");
  int64_t xs[kMaxRank], gs[kMaxRank], ds[kMaxRank], base = 0;
  strides(dx, xs);
  strides(g, gs);
  for (int d = 0; d < dx.rank; ++d) {
    base += s.starts[d] * xs[d];
    ds[d] = xs[d] * s.steps[d];
  }
  stridedCopy(g, g.data, 0, gs, dx.data, base, ds, g.shape, g.rank, stream);
}

void concatKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs, cudaStream_t stream) {
  constexpr std::string_view op = "graph.concat";
  const TensorRef &y = required(op, out, 0);
  int axis = normAxis(op, attrs.getInt("axis"), y.rank);
  int64_t ys[kMaxRank], offset = 0;
  strides(y, ys);
  for (const TensorRef &x : in) {
    sameType(op, x, y);
    if (x.rank != y.rank)
      fail(op, "operand ranks differ");
    int64_t xs[kMaxRank];
    strides(x, xs);
    stridedCopy(x, x.data, 0, xs, y.data, offset * ys[axis], ys, x.shape,
                x.rank, stream);
    offset += x.shape[axis];
  }
  if (offset != y.shape[axis])
    fail(op, "result size along the axis is not the sum");
}

void broadcastToKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &,
                       cudaStream_t stream) {
  constexpr std::string_view op = "graph.broadcast_to";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  sameType(op, x, y);
  int64_t xs[kMaxRank], ys[kMaxRank];
  broadcastStrides(op, x, y, xs);
  strides(y, ys);
  stridedCopy(x, x.data, 0, xs, y.data, 0, ys, y.shape, y.rank, stream);
}

} // namespace ampc::cuda
