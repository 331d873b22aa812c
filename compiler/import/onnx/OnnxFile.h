//===- OnnxFile.h - An ONNX model read into plain C++ -----------*- C++ -*-===//
//
// The ONNX protobuf classes need RTTI and protobuf headers; the MLIR side of
// the importer is built without RTTI. So this file (compiled with RTTI,
// linking libonnx_proto) copies a ModelProto into the plain structs below
// and nothing else includes protobuf.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXFILE_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXFILE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ampc::onnx {

// TensorProto.DataType values used by the importer.
enum DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

// "FLOAT", "INT64", ... for messages.
const char *dataTypeName(int32_t type);
bool isFloatType(int32_t type);

// The element count of |shape|, or -1 when a dimension is negative or the
// count passes 2^62 (a hostile file's dims, or a shape computed from one).
int64_t checkedNumel(const std::vector<int64_t> &shape);
// "[2, 3]", for messages.
std::string shapeString(const std::vector<int64_t> &shape);

// A tensor's values: floating-point types in |f| (as doubles, exact for
// f32/f16/bf16), integer and bool types in |i|.
struct Tensor {
  std::string name;
  int32_t type = kUndefined;
  std::vector<int64_t> shape;
  std::vector<double> f;
  std::vector<int64_t> i;
  int64_t numel() const;
};

struct Attribute {
  enum Kind { Float, Int, String, TensorKind, Floats, Ints, Strings, Other };
  std::string name;
  Kind kind = Other;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<Tensor> t;
};

struct Node {
  std::string name, opType, domain;
  std::vector<std::string> inputs, outputs; // "" for an omitted optional
  std::vector<Attribute> attrs;
  const Attribute *attr(const std::string &name) const;
};

// One dimension of a graph input or output: a size, a symbolic name
// (dim_param, e.g. "batch"), or neither (unknown).
struct Dim {
  int64_t value = -1;
  std::string param;
};

struct ValueInfo {
  std::string name;
  int32_t type = kUndefined;
  bool hasShape = false;
  std::vector<Dim> dims;
};

struct Graph {
  std::string name;
  int64_t opset = 0; // of the default ("" / "ai.onnx") domain
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
};

// Reads a binary ModelProto; false with |error| set on failure.
bool readModel(const std::string &path, Graph &graph, std::string &error);
// Reads a binary TensorProto (the input_0.pb files of ONNX's node tests).
bool readTensor(const std::string &path, Tensor &tensor, std::string &error);

} // namespace ampc::onnx

#endif
