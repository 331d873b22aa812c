//===- Embedding.cpp - embedding and its backward -------------------------===//
//
// Forward copies table rows bit for bit; backward scatter-adds in float
// (ids in order: deterministic) and rounds once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Common.h"

#include <cstring>
#include <string>
#include <vector>

namespace ampc::cpu {

using namespace detail;

// ids [...] (i32/i64), table [V, D] -> [..., D]: rows copied bit for bit.
void embeddingKernel(std::span<const TensorRef> in,
                     std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.embedding";
  const TensorRef &ids = required(op, in, 0), &table = required(op, in, 1);
  const TensorRef &y = required(op, out, 0);
  if (table.dtype != y.dtype)
    fail(op, "element types differ");
  auto [v, d] = embeddingShape(op, ids, table, y);
  std::vector<int64_t> id = loadIds(op, ids);
  size_t row = size_t(d) * dtypeSize(table.dtype);
  for (size_t i = 0; i < id.size(); ++i) {
    if (id[i] < 0 || id[i] >= v)
      fail(op, "id " + std::to_string(id[i]) + " out of range [0, " +
                   std::to_string(v) + ")");
    std::memcpy(static_cast<char *>(y.data) + i * row,
                static_cast<const char *>(table.data) + id[i] * row, row);
  }
}

// ids, g [..., D] -> dtable [V, D]: scatter-add in float, rounded once.
// With init (dtable f32) each finished row sum is added to init's row, as
// the graph.add of the two did.
void embeddingBackwardKernel(std::span<const TensorRef> in,
                             std::span<const TensorRef> out, const Attrs &) {
  constexpr std::string_view op = "graph.embedding_backward";
  const TensorRef &ids = required(op, in, 0), &g = required(op, in, 1);
  const TensorRef *init = optional(in, 2);
  const TensorRef &dt = required(op, out, 0);
  auto [v, d] = embeddingBackwardShape(op, ids, g, dt, init);
  std::vector<int64_t> id = loadIds(op, ids);
  FloatIn fg(g);
  FloatOut fd(dt, /*zeroed=*/true);
  for (size_t i = 0; i < id.size(); ++i) {
    if (id[i] < 0 || id[i] >= v)
      fail(op, "id out of range");
    float *row = fd.data() + id[i] * d;
    const float *src = fg.data() + i * d;
    for (int64_t j = 0; j < d; ++j)
      row[j] += src[j];
  }
  if (init) {
    FloatIn fi(*init);
    for (int64_t i = 0, n = dt.numel(); i < n; ++i)
      fd[i] += fi[i];
  }
  fd.commit();
}

} // namespace ampc::cpu
