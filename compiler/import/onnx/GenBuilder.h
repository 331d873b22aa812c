//===- GenBuilder.h - Writing ONNX files for the import tests -*- C++ -*-===//
//
// What ampc-onnx-gen's model writers share (GenTestModels.cpp,
// GenRecurrentModels.cpp): a ModelProto builder, deterministic values and
// an .npy writer. Only the generator includes it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_GENBUILDER_H
#define AMPC_COMPILER_IMPORT_ONNX_GENBUILDER_H

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace ampc::onnxgen {

using onnx::TensorProto;

// Round to nearest even, for the finite values the generator writes.
inline uint16_t toHalf(float f) {
  double a = std::fabs(double(f));
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (a < std::ldexp(1.0, -14)) // subnormal (2^-24 steps); 1024 is 2^-14
    return sign | uint16_t(std::nearbyint(std::ldexp(a, 24)));
  int e;
  std::frexp(a, &e); // a = m 2^e, m in [0.5, 1)
  // 11 significant bits; a mantissa rounded up to 2048 carries into the
  // exponent field by the addition.
  auto mant = unsigned(std::nearbyint(std::ldexp(a, 11 - e)));
  return sign | uint16_t((unsigned(e - 1 + 15) << 10) + mant - 1024);
}

inline uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

struct Builder {
  onnx::ModelProto model;
  onnx::GraphProto *g;
  Builder(const std::string &name, int opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("ampc-onnx-gen");
    auto *op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    g = model.mutable_graph();
    g->set_name(name);
  }
  void input(const std::string &name, int type,
             const std::vector<std::string> &dims) {
    auto *v = g->add_input();
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto *shape = t->mutable_shape();
    for (const std::string &d : dims) {
      auto *dim = shape->add_dim();
      if (!d.empty() && isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else if (!d.empty())
        dim->set_dim_param(d);
    }
  }
  void output(const std::string &name) { g->add_output()->set_name(name); }
  void init(const std::string &name, const std::vector<int64_t> &shape,
            const std::vector<float> &values) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : shape)
      t->add_dims(d);
    for (float v : values)
      t->add_float_data(v);
  }
  // The values rounded to `type` (FLOAT16, BFLOAT16 or DOUBLE), as a model
  // exported with .half(), .bfloat16() or .double() stores them.
  void initTyped(const std::string &name, int type,
                 const std::vector<int64_t> &shape,
                 const std::vector<float> &values) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : shape)
      t->add_dims(d);
    for (float v : values) {
      if (type == TensorProto::DOUBLE)
        t->add_double_data(v);
      else
        t->add_int32_data(type == TensorProto::FLOAT16 ? toHalf(v) : toBf16(v));
    }
  }
  // Moves the FLOAT initializers' values into DIR/FILE, as
  // onnx.save_model(..., save_as_external_data=True) does: each one's
  // location, offset and length (the last one without a length: to the
  // end of the file).
  bool externalize(const std::string &dir, const std::string &file) {
    std::ofstream out(dir + "/" + file, std::ios::binary);
    int64_t offset = 0;
    for (int i = 0; i < g->initializer_size(); ++i) {
      TensorProto *t = g->mutable_initializer(i);
      if (t->data_type() != TensorProto::FLOAT)
        continue;
      auto bytes = int64_t(t->float_data_size()) * 4;
      out.write(reinterpret_cast<const char *>(t->float_data().data()),
                bytes);
      t->clear_float_data();
      t->set_data_location(TensorProto::EXTERNAL);
      auto entry = [&](const char *key, const std::string &value) {
        auto *kv = t->add_external_data();
        kv->set_key(key);
        kv->set_value(value);
      };
      entry("location", file);
      entry("offset", std::to_string(offset));
      if (i + 1 < g->initializer_size())
        entry("length", std::to_string(bytes));
      offset += bytes;
    }
    return bool(out);
  }
  void initInts(const std::string &name, const std::vector<int64_t> &values) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values)
      t->add_int64_data(v);
  }
  onnx::NodeProto *node(const std::string &op, const std::string &name,
                        const std::vector<std::string> &in,
                        const std::vector<std::string> &out) {
    auto *n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto &i : in)
      n->add_input(i);
    for (const auto &o : out)
      n->add_output(o);
    return n;
  }
  static void intAttr(onnx::NodeProto *n, const std::string &name, int64_t v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void intsAttr(onnx::NodeProto *n, const std::string &name,
                       const std::vector<int64_t> &v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  bool write(const std::string &path) {
    std::ofstream out(path, std::ios::binary);
    return out && model.SerializeToOstream(&out);
  }
};

inline std::vector<float> values(size_t n, double phase, double scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(scale * std::sin(0.7 * double(i) + phase));
  return v;
}

inline bool writeNpy(const std::string &path, const char *descr,
              const std::vector<int64_t> &shape, const void *data,
              size_t bytes) {
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (int64_t d : shape)
    dict += std::to_string(d) + ", ";
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::ofstream out(path, std::ios::binary);
  uint16_t len = uint16_t(dict.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char *>(&len), 2);
  out << dict;
  out.write(static_cast<const char *>(data), std::streamsize(bytes));
  return bool(out);
}

// GenRecurrentModels.cpp: lstm.onnx, gru.onnx, rnn_mix.onnx and their
// batches.
bool writeRecurrentModels(const std::string &dir);

} // namespace ampc::onnxgen

#endif
