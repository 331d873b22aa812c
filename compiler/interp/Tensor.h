//===- Tensor.h - Values of the reference interpreter ------------*- C++ -*-===//
//
// A dense row-major tensor. Float elements are held as doubles whatever the
// element type: in typed numerics every stored value is exactly representable
// in its element type (the interpreter rounds every op result), in FP64
// numerics they are plain doubles. Integer elements are held as int64.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_INTERP_TENSOR_H
#define AMPC_COMPILER_INTERP_TENSOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class Type;
}

namespace ampc::interp {

enum class ElemType { F32, F16, BF16, I32, I64 };

inline bool isFloat(ElemType t) {
  return t == ElemType::F32 || t == ElemType::F16 || t == ElemType::BF16;
}
const char *toString(ElemType t);

// The element type of an MLIR tensor type (or scalar type); asserts on
// anything else.
ElemType elemTypeOf(mlir::Type type);
std::vector<int64_t> shapeOf(mlir::Type type);

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape);
// Row-major strides in elements.
Shape stridesOf(const Shape &shape);
std::string shapeToString(const Shape &shape);

struct Tensor {
  Shape shape;
  ElemType type = ElemType::F32;
  std::vector<double> f;  // float elements
  std::vector<int64_t> i; // integer elements

  Tensor() = default;
  Tensor(Shape shape, ElemType type);
  // A float tensor holding |values| (row-major).
  static Tensor floats(Shape shape, std::vector<double> values,
                       ElemType type = ElemType::F32);
  static Tensor ints(Shape shape, std::vector<int64_t> values,
                     ElemType type = ElemType::I64);
  static Tensor scalar(double v, ElemType type = ElemType::F32) {
    return floats({}, {v}, type);
  }

  int64_t size() const { return numElements(shape); }
  int64_t rank() const { return int64_t(shape.size()); }
  bool isFloat() const { return interp::isFloat(type); }
  // Element |k| as a double (ints converted).
  double at(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
};

// Numpy broadcasting of two shapes; false if they do not broadcast.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out);
// The flat index into a tensor of shape |from| (broadcast to |to|) of the
// element at the multi-index |idx| of |to|.
int64_t broadcastIndex(const Shape &from, const Shape &to,
                       const std::vector<int64_t> &idx);
// Advances a row-major multi-index; returns false after the last one.
bool nextIndex(std::vector<int64_t> &idx, const Shape &shape);

} // namespace ampc::interp

#endif
