//===- Tensor.cpp ----------------------------------------------------------===//
#include "compiler/interp/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cassert>

using namespace ampc::interp;

const char *ampc::interp::toString(ElemType t) {
  switch (t) {
  case ElemType::F32:
    return "f32";
  case ElemType::F16:
    return "f16";
  case ElemType::BF16:
    return "bf16";
  case ElemType::I32:
    return "i32";
  case ElemType::I64:
    return "i64";
  }
  return "?";
}

ElemType ampc::interp::elemTypeOf(mlir::Type type) {
  if (auto t = mlir::dyn_cast<mlir::ShapedType>(type))
    type = t.getElementType();
  if (type.isF32())
    return ElemType::F32;
  if (type.isF16())
    return ElemType::F16;
  if (type.isBF16())
    return ElemType::BF16;
  if (type.isInteger(32))
    return ElemType::I32;
  if (type.isInteger(64))
    return ElemType::I64;
  // Wider floats only appear in tests that drive FP64 numerics explicitly.
  if (type.isF64())
    return ElemType::F32;
  assert(false && "unsupported element type");
  return ElemType::F32;
}

std::vector<int64_t> ampc::interp::shapeOf(mlir::Type type) {
  if (auto t = mlir::dyn_cast<mlir::RankedTensorType>(type))
    return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
  return {};
}

int64_t ampc::interp::numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape ampc::interp::stridesOf(const Shape &shape) {
  Shape s(shape.size(), 1);
  for (int64_t k = int64_t(shape.size()) - 2; k >= 0; --k)
    s[k] = s[k + 1] * shape[k + 1];
  return s;
}

std::string ampc::interp::shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k)
    s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

Tensor::Tensor(Shape shape_, ElemType type_)
    : shape(std::move(shape_)), type(type_) {
  if (interp::isFloat(type))
    f.assign(numElements(shape), 0.0);
  else
    i.assign(numElements(shape), 0);
}

Tensor Tensor::floats(Shape shape, std::vector<double> values, ElemType type) {
  Tensor t;
  t.shape = std::move(shape);
  t.type = type;
  t.f = std::move(values);
  assert(int64_t(t.f.size()) == t.size());
  return t;
}

Tensor Tensor::ints(Shape shape, std::vector<int64_t> values, ElemType type) {
  Tensor t;
  t.shape = std::move(shape);
  t.type = type;
  t.i = std::move(values);
  assert(int64_t(t.i.size()) == t.size());
  return t;
}

bool ampc::interp::broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t n = std::max(a.size(), b.size());
  out.assign(n, 1);
  for (size_t k = 0; k < n; ++k) {
    int64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[k] = da == 1 ? db : da;
  }
  return true;
}

int64_t ampc::interp::broadcastIndex(const Shape &from, const Shape &to,
                                     const std::vector<int64_t> &idx) {
  size_t off = to.size() - from.size();
  int64_t flat = 0;
  for (size_t k = 0; k < from.size(); ++k)
    flat = flat * from[k] + (from[k] == 1 ? 0 : idx[k + off]);
  return flat;
}

bool ampc::interp::nextIndex(std::vector<int64_t> &idx, const Shape &shape) {
  for (int64_t k = int64_t(shape.size()) - 1; k >= 0; --k) {
    if (++idx[k] < shape[k])
      return true;
    idx[k] = 0;
  }
  return false;
}
