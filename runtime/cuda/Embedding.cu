//===- Embedding.cu - embedding and its deterministic backward -------------===//
//
// The backward sorts the ids (a stable radix sort of (id, position) pairs,
// CUB) and lets one block sum each id's gradient rows in position order, in
// FP32, rounding once into dtable. That is the CPU library's order exactly,
// so the result is bitwise the CPU's and the same on every run (an atomic
// scatter-add is neither), and a half dtable needs no FP32 copy of the
// table. Sorting launches kernels only: capturable in a CUDA graph. With
// init (a tied table's other gradient) the table starts as init + 0 and
// each run adds init's row to its sum, as the graph.add it replaces did.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Common.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace ampc::cuda {

using namespace detail;

namespace {

// Rows of an id out of range are zero (the device cannot report them without
// a host sync; the data loader checks token ids against the vocabulary).
__global__ void embeddingRows(const void *ids, int tid, const void *table,
                              int tt, void *y, int ty, int64_t v, int64_t d,
                              int64_t n) {
  AMPC_GRID_STRIDE(i, n) {
    int64_t r = i / d, j = i % d, id = ldId(ids, tid, r);
    st(y, ty, i, id >= 0 && id < v ? ld(table, tt, id * d + j) : 0.0f);
  }
}

// Sort keys: the id, or v (sorted last, then skipped) when out of range.
__global__ void embeddingKeys(const void *ids, int tid, int64_t v, int64_t n,
                              uint32_t *keys, int32_t *positions) {
  AMPC_GRID_STRIDE(i, n) {
    int64_t id = ldId(ids, tid, i);
    keys[i] = uint32_t(id >= 0 && id < v ? id : v);
    positions[i] = int32_t(i);
  }
}

// dt = init + 0 everywhere (an f32 dt): the rows no id names, as the
// graph.add of init and a zero row gave them (a -0.0 becomes +0.0).
__global__ void embeddingInit(const void *init, int ti, float *dt,
                              int64_t n) {
  AMPC_GRID_STRIDE(i, n) { dt[i] = ld(init, ti, i) + 0.0f; }
}

// Block b starts a run of equal sorted keys (or returns): it sums rows
// g[position] of the run, in the sorted (= position) order, and adds the
// row of init if there is one (then dt is f32).
__global__ void embeddingRuns(const uint32_t *keys, const int32_t *positions,
                              int64_t n, const void *g, int tg, void *dt,
                              int tdt, int64_t v, int64_t d, const void *init,
                              int ti) {
  int64_t b = blockIdx.x;
  uint32_t key = keys[b];
  if (key >= v || (b > 0 && keys[b - 1] == key))
    return;
  // The run's end by binary search over the sorted keys: a scan was one
  // step per repeat (a padding id over a whole batch is a long run).
  int64_t end = b + 1, hi = n;
  while (end < hi) {
    int64_t mid = end + (hi - end) / 2;
    if (keys[mid] == key)
      end = mid + 1;
    else
      hi = mid;
  }
  // Rows loaded 8 at a time, then added in position order: the same sum,
  // with 8 loads in flight instead of one (a frequent token in real text
  // is hundreds of rows that this one block sums).
  constexpr int kAhead = 8;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float s = 0.0f;
    int64_t e = b;
    for (; e + kAhead <= end; e += kAhead) {
      float row[kAhead];
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        row[k] = ld(g, tg, int64_t(positions[e + k]) * d + j);
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        s += row[k];
    }
    for (; e < end; ++e)
      s += ld(g, tg, int64_t(positions[e]) * d + j);
    int64_t at = int64_t(key) * d + j;
    st(dt, tdt, at, init ? s + ld(init, ti, at) : s);
  }
}

int bitsFor(int64_t v) {
  int bits = 1;
  while ((int64_t(1) << bits) <= v)
    ++bits;
  return bits;
}

} // namespace

void embeddingKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &,
                     cudaStream_t stream) {
  constexpr std::string_view op = "graph.embedding";
  const TensorRef &ids = required(op, in, 0), &table = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  auto [v, d] = kernels::detail::embeddingShape(op, ids, table, y);
  int64_t n = y.numel();
  if (n)
    embeddingRows<<<gridFor(n), 256, 0, stream>>>(
        ids.data, int(ids.dtype), table.data, int(table.dtype), y.data,
        int(y.dtype), v, d, n);
  checkLaunch("embedding");
}

void embeddingBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out, const Attrs &,
                             cudaStream_t stream) {
  constexpr std::string_view op = "graph.embedding_backward";
  const TensorRef &ids = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef *init = optional(in, 2);
  const TensorRef &dt = required(op, out, 0);
  auto [v, d] = kernels::detail::embeddingBackwardShape(op, ids, g, dt, init);
  int64_t n = ids.numel();
  if (v >= INT32_MAX || n >= INT32_MAX)
    fail(op, "more than 2^31 ids or table rows");
  if (init && dt.numel())
    embeddingInit<<<gridFor(dt.numel()), 256, 0, stream>>>(
        init->data, int(init->dtype), static_cast<float *>(dt.data),
        dt.numel());
  else // rows no id names stay zero (all-zero bits are +0 in every format)
    check(cudaMemsetAsync(dt.data, 0,
                          size_t(dt.numel()) * dtypeSize(dt.dtype), stream),
          op.data());
  if (n == 0 || d == 0) {
    checkLaunch("embedding_backward");
    return;
  }
  int bits = bitsFor(v); // keys are 0..v
  size_t sortBytes = 0;  // a size query: no work is enqueued
  check(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, (uint32_t *)nullptr,
                                        (uint32_t *)nullptr, (int32_t *)nullptr,
                                        (int32_t *)nullptr, int(n), 0, bits,
                                        stream),
        "embedding_backward: sort size");
  size_t idBytes = (size_t(n) * sizeof(int32_t) + 255) & ~size_t(255);
  char *s = static_cast<char *>(scratch(4 * idBytes + sortBytes, op, stream));
  auto *keysIn = reinterpret_cast<uint32_t *>(s);
  auto *posIn = reinterpret_cast<int32_t *>(s + idBytes);
  auto *keys = reinterpret_cast<uint32_t *>(s + 2 * idBytes);
  auto *positions = reinterpret_cast<int32_t *>(s + 3 * idBytes);
  embeddingKeys<<<gridFor(n), 256, 0, stream>>>(ids.data, int(ids.dtype), v, n,
                                                keysIn, posIn);
  check(cub::DeviceRadixSort::SortPairs(s + 4 * idBytes, sortBytes, keysIn, keys,
                                        posIn, positions, int(n), 0, bits,
                                        stream),
        "embedding_backward: sort");
  embeddingRuns<<<unsigned(n), d < 256 ? 128 : 256, 0, stream>>>(
      keys, positions, n, g.data, int(g.dtype), dt.data, int(dt.dtype), v, d,
      init ? init->data : nullptr, init ? int(init->dtype) : 0);
  checkLaunch("embedding_backward");
}

} // namespace ampc::cuda
