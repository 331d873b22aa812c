//===- Sequence.cpp - SplitToSequence and SequenceAt ----------------------===//
//
// The dynamo exporter without its optimizer (torch.onnx.export(...,
// dynamo=True, optimize=False), which keeps the state_dict names) writes
// Tensor.split as SplitToSequence and each chunk as SequenceAt. A sequence
// here is its source tensor and its chunks' bounds; SequenceAt, at a
// position known at import time, slices its chunk out.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

LogicalResult splitToSequence(ImportState &s) {
  if (failed(s.onlyAttrs({"axis", "keepdims"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t rank = int64_t(shapeOf(*x).size());
  FailureOr<int64_t> axis = s.normAxis(s.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t n = shapeOf(*x)[size_t(*axis)];
  // Chunk sizes: split's list, chunks of split's scalar size (the last
  // one shorter), or one element each.
  std::vector<int64_t> sizes;
  bool scalar = false;
  if (s.hasInput(1)) {
    auto split = s.intsInput(1, "split");
    if (failed(split))
      return failure();
    scalar = s.constInput(1)->shape.empty();
    if (s.constInput(1)->shape.size() > 1)
      return s.error("split must be a scalar or 1-D");
    if (scalar) {
      int64_t size = split->empty() ? 0 : (*split)[0];
      if (size <= 0)
        return s.error("split must be positive");
      for (int64_t at = 0; at < n; at += size)
        sizes.push_back(std::min(size, n - at));
    } else {
      sizes = *split;
    }
  } else {
    sizes.assign(size_t(n), 1);
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return s.error("split sizes must not be negative");
    if (size > n - total)
      return s.error("split sizes add up to more than the axis' " +
                     std::to_string(n));
    total += size;
  }
  if (total != n)
    return s.error("split sizes add up to " + std::to_string(total) +
                   ", not the axis' " + std::to_string(n));
  // keepdims=0 drops the axis, only for the one-element chunks of no split.
  ImportState::Sequence seq;
  seq.source = *x;
  seq.axis = *axis;
  seq.squeeze = !s.hasInput(1) && s.intAttr("keepdims", 1) == 0;
  int64_t at = 0;
  for (int64_t size : sizes) {
    seq.chunks.push_back({at, size});
    at += size;
  }
  s.setSequence(s.node->outputs[0], std::move(seq));
  return success();
}

LogicalResult sequenceAt(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  const ImportState::Sequence *seq =
      s.hasInput(0) ? s.sequence(s.node->inputs[0]) : nullptr;
  if (!seq)
    return s.error("input 0 is not a sequence from SplitToSequence");
  auto pos = s.intsInput(1, "position");
  if (failed(pos))
    return failure();
  if (pos->size() != 1)
    return s.error("position must be one integer");
  int64_t n = int64_t(seq->chunks.size()),
          p = (*pos)[0] < 0 ? (*pos)[0] + n : (*pos)[0];
  if (p < 0 || p >= n)
    return s.error("position " + std::to_string((*pos)[0]) +
                   " is out of range for a sequence of " + std::to_string(n));
  auto [start, size] = seq->chunks[size_t(p)];
  FailureOr<Value> c = sliceAxis(s, seq->source, seq->axis, start,
                                 start + size);
  if (failed(c))
    return failure();
  if (seq->squeeze) {
    SmallVector<int64_t> shape(shapeOf(*c));
    shape.erase(shape.begin() + seq->axis);
    if (failed(c = reshapeTo(s, *c, shape)))
      return failure();
  }
  s.result(0, *c);
  return success();
}

} // namespace

void registerSequenceOps(OpTable &t) {
  t["SplitToSequence"] = splitToSequence;
  t["SequenceAt"] = sequenceAt;
}

} // namespace ampc::onnx
