//===- Shape.cpp - Data movement: reshape, transpose, slice, concat, ... ---===//
//
// Also constants, embedding (a gather) and the backward ops that move data:
// broadcast_to, slice_backward, embedding_backward. Integer tensors move too.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Kernel.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace ampc::interp;

namespace {

void copyElem(Tensor &dst, int64_t d, const Tensor &src, int64_t s) {
  if (dst.isFloat())
    dst.f[d] = src.at(s);
  else
    dst.i[d] = src.i[s];
}

// Calls f(flat output index, multi-index) over every element of |shape|.
template <typename F> void forEach(const Shape &shape, F f) {
  if (numElements(shape) == 0)
    return;
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t k = 0;
  do {
    f(k++, idx);
  } while (nextIndex(idx, shape));
}

int64_t flatten(const std::vector<int64_t> &idx, const Shape &shape) {
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k)
    flat = flat * shape[k] + idx[k];
  return flat;
}

KernelResult reshape(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  out.f = in[0].f;
  out.i = in[0].i;
  return one(std::move(out));
}

KernelResult transpose(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  std::vector<int64_t> perm = ctx.getInts("perm", {});
  std::vector<int64_t> src(perm.size());
  forEach(out.shape, [&](int64_t k, const std::vector<int64_t> &idx) {
    for (size_t d = 0; d < perm.size(); ++d)
      src[perm[d]] = idx[d];
    copyElem(out, k, in[0], flatten(src, in[0].shape));
  });
  return one(std::move(out));
}

struct SliceSpec {
  std::vector<int64_t> starts, strides, perm;
  explicit SliceSpec(const OpContext &ctx, size_t rank)
      : starts(ctx.getInts("starts", {})),
        strides(ctx.getOptionalInts("strides")
                    .value_or(std::vector<int64_t>(rank, 1))),
        perm(ctx.getOptionalInts("perm").value_or(identity(rank))) {}
  // The input multi-index of result element |idx| (result dimension i is
  // slice dimension perm[i]).
  std::vector<int64_t> source(const std::vector<int64_t> &idx) const {
    std::vector<int64_t> s(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      int64_t d = perm[i];
      s[d] = starts[d] + idx[i] * strides[d];
    }
    return s;
  }
  static std::vector<int64_t> identity(size_t rank) {
    std::vector<int64_t> p(rank);
    for (size_t i = 0; i < rank; ++i)
      p[i] = int64_t(i);
    return p;
  }
};

KernelResult slice(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  SliceSpec spec(ctx, out.shape.size());
  forEach(out.shape, [&](int64_t k, const std::vector<int64_t> &idx) {
    copyElem(out, k, in[0], flatten(spec.source(idx), in[0].shape));
  });
  return one(std::move(out));
}

// slice_backward(g) -> dx (spelled): g at the sliced positions, 0 elsewhere.
KernelResult sliceBackward(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  SliceSpec spec(ctx, out.shape.size());
  forEach(in[0].shape, [&](int64_t k, const std::vector<int64_t> &idx) {
    copyElem(out, flatten(spec.source(idx), out.shape), in[0], k);
  });
  return one(std::move(out));
}

// Each input transposed by the optional perm (dimension i of the
// transposed input is the input's dimension perm[i]), then joined.
KernelResult concat(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  int64_t axis = normAxis(ctx.getInt("axis", 0), out.rank());
  if (axis < 0)
    return ctx.error() << "concat axis out of range";
  std::vector<int64_t> perm = ctx.getOptionalInts("perm").value_or(
      SliceSpec::identity(out.shape.size()));
  std::vector<int64_t> src(perm.size());
  forEach(out.shape, [&](int64_t k, const std::vector<int64_t> &idx) {
    int64_t along = idx[axis];
    for (const Tensor &t : in) {
      int64_t size = t.shape[perm[axis]];
      if (along < size) {
        for (size_t d = 0; d < perm.size(); ++d)
          src[perm[d]] = idx[d];
        src[perm[axis]] = along;
        copyElem(out, k, t, flatten(src, t.shape));
        return;
      }
      along -= size;
    }
  });
  return one(std::move(out));
}

// broadcast_to(x) -> x broadcast (numpy rules) to the spelled shape.
KernelResult broadcastTo(const OpContext &ctx, std::span<const Tensor> in) {
  Tensor out = ctx.makeResult();
  Shape joined;
  if (!broadcastShapes(in[0].shape, out.shape, joined) || joined != out.shape)
    return ctx.error() << "cannot broadcast " << shapeToString(in[0].shape)
                       << " to " << shapeToString(out.shape);
  forEach(out.shape, [&](int64_t k, const std::vector<int64_t> &idx) {
    copyElem(out, k, in[0], broadcastIndex(in[0].shape, out.shape, idx));
  });
  return one(std::move(out));
}

KernelResult constant(const OpContext &ctx, std::span<const Tensor>) {
  Tensor out = ctx.makeResult();
  auto attr =
      mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(ctx.getOp()->getAttr("value"));
  if (!attr)
    return ctx.error() << "the interpreter reads dense constants only";
  int64_t k = 0;
  if (out.isFloat()) {
    for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>())
      out.f[k++] = v.convertToDouble();
  } else {
    for (const llvm::APInt &v : attr.getValues<llvm::APInt>())
      out.i[k++] = v.getSExtValue();
  }
  return one(std::move(out));
}

// Checks every id is a row of a table with |v| rows.
mlir::LogicalResult checkIds(const OpContext &ctx, const Tensor &ids,
                             int64_t v) {
  for (int64_t k = 0; k < ids.size(); ++k)
    if (ids.i[k] < 0 || ids.i[k] >= v)
      return ctx.error() << "embedding id " << ids.i[k] << " at position " << k
                         << " is outside the table [0, " << v << ")";
  return mlir::success();
}

KernelResult embedding(const OpContext &ctx, std::span<const Tensor> in) {
  const Tensor &ids = in[0], &table = in[1];
  int64_t d = table.shape[1];
  if (mlir::failed(checkIds(ctx, ids, table.shape[0])))
    return mlir::failure();
  Tensor out = ctx.makeResult();
  for (int64_t k = 0; k < ids.size(); ++k)
    for (int64_t j = 0; j < d; ++j)
      out.f[k * d + j] = table.f[ids.i[k] * d + j];
  return one(std::move(out));
}

// embedding_backward(ids, g[, init]) -> dtable [V, D] (spelled),
// scatter-add; init is added to the finished sums (the graph.add it
// replaces; the result is rounded afterwards).
KernelResult embeddingBackward(const OpContext &ctx,
                               std::span<const Tensor> in) {
  const Tensor &ids = in[0], &g = in[1];
  Tensor out = ctx.makeResult();
  int64_t d = out.shape[1];
  if (mlir::failed(checkIds(ctx, ids, out.shape[0])))
    return mlir::failure();
  for (int64_t k = 0; k < ids.size(); ++k)
    for (int64_t j = 0; j < d; ++j)
      accumulate(ctx, out.f[ids.i[k] * d + j], g.f[k * d + j]);
  if (in.size() > 2)
    for (int64_t i = 0; i < out.size(); ++i)
      out.f[i] += in[2].f[i];
  return one(std::move(out));
}

} // namespace

void ampc::interp::registerShapeKernels(KernelTable &t) {
  t["graph.reshape"] = reshape;
  t["graph.transpose"] = transpose;
  t["graph.slice"] = slice;
  t["graph.slice_backward"] = sliceBackward;
  t["graph.concat"] = concat;
  t["graph.broadcast_to"] = broadcastTo;
  t["graph.constant"] = constant;
  t["graph.embedding"] = embedding;
  t["graph.embedding_backward"] = embeddingBackward;
  // Shape sugar (normally rewritten by graph-desugar first).
  t["graph.squeeze"] = reshape;
  t["graph.unsqueeze"] = reshape;
  t["graph.expand"] = broadcastTo;
}
