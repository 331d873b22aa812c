//===- Shape.cpp - reshape, transpose, slice, concat, broadcast_to -------===//
//
// Pure data movement: elements are copied bit for bit, whatever the type
// (embedding is in Embedding.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ampc::cpu {

using namespace detail;

namespace {

// A transpose of the last two dimensions (source contiguous along the
// second-last, destination along the last: a weight gradient's x^T): one
// element at a time, every read would touch a new cache line; in 16 x 16
// tiles each line is read once.
template <class T>
void transposedPlanesT(T *dst, const int64_t *ds, const T *src,
                       const int64_t *ss, const int64_t *shape, int rank) {
  constexpr int64_t kTile = 16;
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  int64_t dr = ds[rank - 2], sc = ss[rank - 1];
  int64_t planes = 1;
  for (int d = 0; d < rank - 2; ++d)
    planes *= shape[d];
  int64_t idx[kMaxRank] = {};
  int64_t od = 0, os = 0;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i0 = 0; i0 < rows; i0 += kTile)
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j)
            dst[od + i * dr + j] = src[os + i + j * sc];
      }
    for (int d = rank - 3; d >= 0; --d) {
      od += ds[d];
      os += ss[d];
      if (++idx[d] < shape[d])
        break;
      od -= ds[d] * shape[d];
      os -= ss[d] * shape[d];
      idx[d] = 0;
    }
  }
}

template <class T>
void stridedCopyT(T *dst, const int64_t *ds, const T *src, const int64_t *ss,
                  const int64_t *shape, int rank) {
  if (rank >= 2 && ds[rank - 1] == 1 && ss[rank - 2] == 1 &&
      ss[rank - 1] != 1)
    return transposedPlanesT(dst, ds, src, ss, shape, rank);
  int64_t total = 1;
  for (int d = 0; d < rank; ++d)
    total *= shape[d];
  if (total == 0)
    return;
  if (rank == 0) {
    *dst = *src;
    return;
  }
  int64_t idx[kMaxRank] = {};
  int64_t inner = shape[rank - 1], di = ds[rank - 1], si = ss[rank - 1];
  int64_t od = 0, os = 0;
  for (int64_t done = 0; done < total; done += inner) {
    if (di == 1 && si == 1) // contiguous rows (heads, slices): a memcpy
      std::memcpy(dst + od, src + os, size_t(inner) * sizeof(T));
    else
      for (int64_t j = 0; j < inner; ++j)
        dst[od + j * di] = src[os + j * si];
    for (int d = rank - 2; d >= 0; --d) {
      od += ds[d];
      os += ss[d];
      if (++idx[d] < shape[d])
        break;
      od -= ds[d] * shape[d];
      os -= ss[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Drops size-1 dimensions and merges each dimension into the next when
// both sides step over it as one run (stride = next stride * next size):
// the same elements in the same places, in longer inner rows (a slice of
// [16, 64, 192] becomes 1024 rows of 64, a head transpose rows of 16).
int coalesce(int64_t *ds, int64_t *ss, int64_t *shape, int rank) {
  int n = 0;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1)
      continue;
    if (n > 0 && ds[n - 1] == ds[d] * shape[d] &&
        ss[n - 1] == ss[d] * shape[d]) {
      shape[n - 1] *= shape[d];
      ds[n - 1] = ds[d];
      ss[n - 1] = ss[d];
      continue;
    }
    shape[n] = shape[d];
    ds[n] = ds[d];
    ss[n] = ss[d];
    ++n;
  }
  return n;
}

// Copies the |shape| box: dst[sum i_d*ds_d] = src[sum i_d*ss_d] (elements).
void stridedCopy(size_t esz, void *dst, const int64_t *dsIn, const void *src,
                 const int64_t *ssIn, const int64_t *shapeIn, int rankIn) {
  int64_t ds[kMaxRank], ss[kMaxRank], shape[kMaxRank];
  for (int d = 0; d < rankIn; ++d) {
    if (shapeIn[d] == 0)
      return;
    ds[d] = dsIn[d];
    ss[d] = ssIn[d];
    shape[d] = shapeIn[d];
  }
  int rank = coalesce(ds, ss, shape, rankIn);
  switch (esz) {
  case 2:
    return stridedCopyT(static_cast<uint16_t *>(dst), ds,
                        static_cast<const uint16_t *>(src), ss, shape, rank);
  case 4:
    return stridedCopyT(static_cast<uint32_t *>(dst), ds,
                        static_cast<const uint32_t *>(src), ss, shape, rank);
  default:
    return stridedCopyT(static_cast<uint64_t *>(dst), ds,
                        static_cast<const uint64_t *>(src), ss, shape, rank);
  }
}

// Runs one shared copy plan (runtime/kernels/Geometry.h) on |src| -> |dst|.
void stridedCopy(const StridedCopy &c, size_t esz, void *dst, const void *src) {
  stridedCopy(esz, static_cast<char *>(dst) + c.dstBase * esz, c.dst,
              static_cast<const char *>(src) + c.srcBase * esz, c.src, c.dims,
              c.rank);
}

} // namespace

void reshapeKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                   const Attrs &) {
  constexpr std::string_view op = "graph.reshape";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  reshapeCheck(op, x, y);
  if (x.data != y.data)
    std::memmove(y.data, x.data, size_t(x.numel()) * dtypeSize(x.dtype));
}

// Result dimension i is input dimension perm[i].
void transposeKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.transpose";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  stridedCopy(transposeCopy(op, x, y, attrs), dtypeSize(x.dtype), y.data,
              x.data);
}

void sliceKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                 const Attrs &attrs) {
  constexpr std::string_view op = "graph.slice";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  stridedCopy(sliceCopy(op, x, y, attrs), dtypeSize(x.dtype), y.data, x.data);
}

// g (the slice's cotangent) -> dx with the input's shape, zeros elsewhere.
void sliceBackwardKernel(std::span<const TensorRef> in,
                         std::span<const TensorRef> out, const Attrs &attrs) {
  constexpr std::string_view op = "graph.slice_backward";
  const TensorRef &g = required(op, in, 0), &dx = required(op, out, 0);
  StridedCopy c = sliceBackwardCopy(op, g, dx, attrs);
  size_t esz = dtypeSize(dx.dtype);
  std::memset(dx.data, 0, size_t(dx.numel()) * esz); // +0.0 in every format
  stridedCopy(c, esz, dx.data, g.data);
}

// One strided copy per input into its slab of y (rows of its slab are
// memcpys when the input is not transposed): each element written once.
void concatKernel(std::span<const TensorRef> in, std::span<const TensorRef> out,
                  const Attrs &attrs) {
  constexpr std::string_view op = "graph.concat";
  const TensorRef &y = required(op, out, 0);
  std::vector<StridedCopy> copies = concatCopies(op, in, y, attrs);
  size_t esz = dtypeSize(y.dtype);
  for (size_t i = 0; i < copies.size(); ++i)
    stridedCopy(copies[i], esz, y.data, in[i].data);
}

void broadcastToKernel(std::span<const TensorRef> in,
                       std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.broadcast_to";
  const TensorRef &x = required(op, in, 0), &y = required(op, out, 0);
  stridedCopy(broadcastCopy(op, x, y), dtypeSize(x.dtype), y.data, x.data);
}

} // namespace ampc::cpu
