//===- OnnxFile.cpp - ModelProto -> plain structs
//---------------------------===//
#include "compiler/import/onnx/OnnxFile.h"

#include "onnx/onnx_pb.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ampc::onnx {

const char *dataTypeName(int32_t type) {
  switch (type) {
  case kFloat:
    return "FLOAT";
  case kUint8:
    return "UINT8";
  case kInt8:
    return "INT8";
  case kUint16:
    return "UINT16";
  case kInt16:
    return "INT16";
  case kInt32:
    return "INT32";
  case kInt64:
    return "INT64";
  case kString:
    return "STRING";
  case kBool:
    return "BOOL";
  case kFloat16:
    return "FLOAT16";
  case kDouble:
    return "DOUBLE";
  case kUint32:
    return "UINT32";
  case kUint64:
    return "UINT64";
  case kBfloat16:
    return "BFLOAT16";
  default:
    return "UNDEFINED";
  }
}

bool isFloatType(int32_t type) {
  return type == kFloat || type == kFloat16 || type == kDouble ||
         type == kBfloat16;
}

int64_t checkedNumel(const std::vector<int64_t> &shape) {
  constexpr int64_t kLimit = int64_t(1) << 62;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > kLimit / d))
      return -1;
    n *= d;
  }
  return n;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const Attribute *Node::attr(const std::string &n) const {
  for (const Attribute &a : attrs)
    if (a.name == n)
      return &a;
  return nullptr;
}

namespace {

double halfToDouble(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}

double bf16ToDouble(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T> T load(const std::string &raw, size_t k) {
  T v;
  std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
  return v;
}

size_t elemSize(int32_t type) {
  switch (type) {
  case kFloat:
  case kInt32:
  case kUint32:
    return 4;
  case kInt64:
  case kUint64:
  case kDouble:
    return 8;
  case kFloat16:
  case kBfloat16:
  case kInt16:
  case kUint16:
    return 2;
  case kUint8:
  case kInt8:
  case kBool:
    return 1;
  default:
    return 0;
  }
}

// Names reach diagnostics and the model file's locations: a control
// character (a newline) would break the one-line errors. Each is written
// \xNN, the same everywhere and distinct from any other name's, so the
// graph's wiring stays as it was.
void printable(std::string &name) {
  std::string out;
  for (char c : name) {
    if (std::iscntrl(static_cast<unsigned char>(c)) || c == '\\') {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", unsigned(uint8_t(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  name = std::move(out);
}

// Integers are held as int64: a UINT64 past 2^63 - 1 (read in as a
// negative value; 2^64 - 1 cast to float folded to -1) is refused.
bool fitsInt64(const Tensor &t, std::string &error) {
  if (t.type == kUint64)
    for (int64_t v : t.i)
      if (v < 0) {
        error = "tensor '" + t.name + "' holds the UINT64 value " +
                std::to_string(uint64_t(v)) + ", past what ampc holds (int64)";
        return false;
      }
  return true;
}

// A decimal count of external_data ("offset", "length").
bool parseCount(const std::string &text, int64_t &v) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && v >= 0;
}

// ONNX's external data (a model past protobuf's 2 GB limit, or saved with
// save_as_external_data): the tensor's bytes are |length| bytes at |offset|
// of the file |location| names, relative to the model's directory. The
// location rules are those of ONNX's checker: relative, without "..", a
// regular file, not a link, and inside the model's directory once links on
// the way are resolved (a model must not read files outside its directory
// into the weights it writes).
bool readExternal(const ::onnx::TensorProto &p, const Tensor &t,
                  const std::string &modelDir, std::string &raw,
                  std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : p.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t &v = kv.key() == "offset" ? offset : length;
      if (!parseCount(kv.value(), v)) {
        std::string value = kv.value();
        printable(value);
        error = "tensor '" + t.name + "': external data " + kv.key() + " '" +
                value + "' is not a count of bytes";
        return false;
      }
    }
  }
  std::string shown = location;
  printable(shown);
  const std::string what = "tensor '" + t.name + "': external data ";
  if (location.empty()) {
    error = what + "without a location";
    return false;
  }
  namespace fs = std::filesystem;
  fs::path rel(location);
  bool escapes = rel.has_root_path();
  for (const fs::path &part : rel)
    escapes |= part == "..";
  if (escapes) {
    error = what + "location '" + shown +
            "' is not a path inside the model's directory";
    return false;
  }
  fs::path file = modelDir.empty() ? rel : fs::path(modelDir) / rel;
  std::error_code ec;
  fs::file_status status = fs::symlink_status(file, ec);
  if (fs::is_symlink(status)) {
    error = what + "file '" + shown + "' is a symbolic link (ONNX's checker "
            "refuses links)";
    return false;
  }
  if (!fs::exists(status)) {
    error = what + "file '" + shown +
            "' does not exist in the model's directory";
    return false;
  }
  if (!fs::is_regular_file(status)) {
    error = what + "'" + shown + "' is not a regular file";
    return false;
  }
  // A linked directory on the way could still lead out.
  fs::path inside = fs::canonical(file, ec).lexically_relative(
      fs::canonical(modelDir.empty() ? "." : modelDir, ec));
  if (ec || inside.empty() || *inside.begin() == "..") {
    error = what + "file '" + shown + "' is outside the model's directory "
            "(through a link)";
    return false;
  }
  auto size = int64_t(fs::file_size(file, ec));
  if (ec) {
    error = what + "cannot read the size of '" + shown + "'";
    return false;
  }
  if (offset > size) {
    error = what + "offset " + std::to_string(offset) +
            " is past the end of '" + shown + "' (" + std::to_string(size) +
            " bytes)";
    return false;
  }
  if (length < 0)
    length = size - offset;
  if (length > size - offset) {
    error = what + "of " + std::to_string(length) + " bytes at offset " +
            std::to_string(offset) + " passes the end of '" + shown + "' (" +
            std::to_string(size) + " bytes)";
    return false;
  }
  std::ifstream in(file, std::ios::binary);
  raw.resize(size_t(length));
  if (!in.seekg(offset) || !in.read(raw.data(), length)) {
    error = what + "cannot read '" + shown + "'";
    return false;
  }
  return true;
}

// |raw| as |t|'s n values (raw_data, or external data).
bool fromRaw(const std::string &raw, int64_t n, Tensor &t,
             std::string &error) {
  size_t es = elemSize(t.type);
  if (!es) {
    error = std::string("tensor '") + t.name + "' has unsupported type " +
            dataTypeName(t.type);
    return false;
  }
  // n is at most 2^62, so n * es can pass 2^64.
  if (raw.size() % es != 0 || raw.size() / es != uint64_t(n)) {
    bool fits = uint64_t(n) <= UINT64_MAX / es;
    error = "tensor '" + t.name + "' has " + std::to_string(raw.size()) +
            " bytes of data, its shape needs " +
            (fits ? std::to_string(uint64_t(n) * es)
                  : std::to_string(n) + " values of " + std::to_string(es) +
                        " bytes");
    return false;
  }
  for (int64_t k = 0; k < n; ++k) {
    switch (t.type) {
    case kFloat:
      t.f.push_back(load<float>(raw, k));
      break;
    case kDouble:
      t.f.push_back(load<double>(raw, k));
      break;
    case kFloat16:
      t.f.push_back(halfToDouble(load<uint16_t>(raw, k)));
      break;
    case kBfloat16:
      t.f.push_back(bf16ToDouble(load<uint16_t>(raw, k)));
      break;
    case kInt64:
      t.i.push_back(load<int64_t>(raw, k));
      break;
    case kUint64:
      t.i.push_back(int64_t(load<uint64_t>(raw, k)));
      break;
    case kInt32:
      t.i.push_back(load<int32_t>(raw, k));
      break;
    case kUint32:
      t.i.push_back(load<uint32_t>(raw, k));
      break;
    case kInt16:
      t.i.push_back(load<int16_t>(raw, k));
      break;
    case kUint16:
      t.i.push_back(load<uint16_t>(raw, k));
      break;
    case kInt8:
      t.i.push_back(load<int8_t>(raw, k));
      break;
    case kUint8:
    case kBool:
      t.i.push_back(load<uint8_t>(raw, k));
      break;
    }
  }
  return fitsInt64(t, error);
}

bool convertTensor(const ::onnx::TensorProto &p, const std::string &modelDir,
                   Tensor &t, std::string &error) {
  t.name = p.name();
  printable(t.name);
  t.type = p.data_type();
  t.shape.assign(p.dims().begin(), p.dims().end());
  int64_t n = checkedNumel(t.shape);
  if (n < 0) {
    error = "tensor '" + t.name + "' has dims " + shapeString(t.shape) +
            ": a negative dimension or more than 2^62 elements";
    return false;
  }
  if (p.data_location() == ::onnx::TensorProto::EXTERNAL) {
    std::string raw;
    return readExternal(p, t, modelDir, raw, error) &&
           fromRaw(raw, n, t, error);
  }
  if (p.has_raw_data())
    return fromRaw(p.raw_data(), n, t, error);
  bool isFloat = isFloatType(t.type);
  switch (t.type) {
  case kFloat:
    t.f.assign(p.float_data().begin(), p.float_data().end());
    break;
  case kDouble:
    t.f.assign(p.double_data().begin(), p.double_data().end());
    break;
  case kFloat16:
  case kBfloat16:
    for (int32_t v : p.int32_data())
      t.f.push_back(t.type == kFloat16 ? halfToDouble(uint16_t(v))
                                       : bf16ToDouble(uint16_t(v)));
    break;
  case kInt64:
    t.i.assign(p.int64_data().begin(), p.int64_data().end());
    break;
  case kUint64:
  case kUint32:
    for (uint64_t v : p.uint64_data())
      t.i.push_back(int64_t(v));
    break;
  case kInt32:
  case kInt16:
  case kUint16:
  case kInt8:
  case kUint8:
  case kBool:
    t.i.assign(p.int32_data().begin(), p.int32_data().end());
    break;
  default:
    error = std::string("tensor '") + t.name + "' has unsupported type " +
            dataTypeName(t.type);
    return false;
  }
  size_t have = isFloat ? t.f.size() : t.i.size();
  if (int64_t(have) != n) {
    error = "tensor '" + t.name + "' has " + std::to_string(have) +
            " values, its shape needs " + std::to_string(n);
    return false;
  }
  return fitsInt64(t, error);
}

bool convertAttribute(const ::onnx::AttributeProto &p,
                      const std::string &modelDir, Attribute &a,
                      std::string &error) {
  a.name = p.name();
  switch (p.type()) {
  case ::onnx::AttributeProto::FLOAT:
    a.kind = Attribute::Float;
    a.f = p.f();
    break;
  case ::onnx::AttributeProto::INT:
    a.kind = Attribute::Int;
    a.i = p.i();
    break;
  case ::onnx::AttributeProto::STRING:
    a.kind = Attribute::String;
    a.s = p.s();
    break;
  case ::onnx::AttributeProto::TENSOR:
    a.kind = Attribute::TensorKind;
    a.t = std::make_shared<Tensor>();
    return convertTensor(p.t(), modelDir, *a.t, error);
  case ::onnx::AttributeProto::FLOATS:
    a.kind = Attribute::Floats;
    a.floats.assign(p.floats().begin(), p.floats().end());
    break;
  case ::onnx::AttributeProto::INTS:
    a.kind = Attribute::Ints;
    a.ints.assign(p.ints().begin(), p.ints().end());
    break;
  case ::onnx::AttributeProto::STRINGS:
    a.kind = Attribute::Strings;
    a.strings.assign(p.strings().begin(), p.strings().end());
    break;
  default:
    a.kind = Attribute::Other;
    break;
  }
  return true;
}

void convertValueInfo(const ::onnx::ValueInfoProto &p, ValueInfo &v) {
  v.name = p.name();
  if (!p.type().has_tensor_type())
    return;
  const auto &tt = p.type().tensor_type();
  v.type = tt.elem_type();
  v.hasShape = tt.has_shape();
  for (const auto &d : tt.shape().dim()) {
    Dim dim;
    if (d.has_dim_value())
      dim.value = d.dim_value();
    else if (d.has_dim_param())
      dim.param = d.dim_param();
    v.dims.push_back(dim);
  }
}

bool readFile(const std::string &path, std::string &bytes, std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) { // it opens, as empty
    error = "'" + path + "' is a directory, not an ONNX file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  bytes = ss.str();
  return true;
}

// Where a model's external data files are found.
std::string parentDir(const std::string &path) {
  return std::filesystem::path(path).parent_path().string();
}

} // namespace

bool readModel(const std::string &path, Graph &graph, std::string &error) {
  std::string bytes;
  if (!readFile(path, bytes, error))
    return false;
  ::onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    error = "'" + path + "' is not an ONNX model (protobuf parse failed)";
    return false;
  }
  // Every byte string parses as some message; an empty one (an empty file)
  // as a model without a graph.
  if (!model.has_graph()) {
    error = "'" + path + "' is not an ONNX model (it holds no graph)";
    return false;
  }
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      graph.opset = o.version();
  const std::string modelDir = parentDir(path);
  const auto &g = model.graph();
  graph.name = g.name();
  for (const auto &init : g.initializer()) {
    Tensor t;
    if (!convertTensor(init, modelDir, t, error))
      return false;
    graph.initializers.push_back(std::move(t));
  }
  for (const auto &n : g.node()) {
    Node node;
    node.name = n.name();
    node.opType = n.op_type();
    node.domain = n.domain();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto &a : n.attribute()) {
      Attribute attr;
      if (!convertAttribute(a, modelDir, attr, error))
        return false;
      node.attrs.push_back(std::move(attr));
    }
    graph.nodes.push_back(std::move(node));
  }
  for (const auto &v : g.input()) {
    ValueInfo info;
    convertValueInfo(v, info);
    graph.inputs.push_back(std::move(info));
  }
  for (const auto &v : g.output()) {
    ValueInfo info;
    convertValueInfo(v, info);
    graph.outputs.push_back(std::move(info));
  }
  printable(graph.name);
  for (Node &n : graph.nodes) {
    printable(n.name);
    for (std::string &v : n.inputs)
      printable(v);
    for (std::string &v : n.outputs)
      printable(v);
  }
  for (ValueInfo &v : graph.inputs)
    printable(v.name);
  for (ValueInfo &v : graph.outputs)
    printable(v.name);
  return true;
}

bool readTensor(const std::string &path, Tensor &tensor, std::string &error) {
  std::string bytes;
  if (!readFile(path, bytes, error))
    return false;
  ::onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) {
    error = "'" + path + "' is not a TensorProto";
    return false;
  }
  return convertTensor(p, parentDir(path), tensor, error);
}

} // namespace ampc::onnx
