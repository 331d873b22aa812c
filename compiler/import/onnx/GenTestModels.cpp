//===- GenTestModels.cpp - Small ONNX files for the import tests ----------===//
//
// ampc-onnx-gen DIR writes the models test/Import imports (built with the
// ONNX protobuf API, since the tests cannot use Python's onnx package):
//   mlp.onnx          x[N,4] -> Gemm -> Relu -> Gemm -> logits[N,3]
//   mlp_x.npy, mlp_label.npy, mlp_loss.txt
//                     a batch of 8 and the mean cross entropy of the MLP on
//                     it with the file's weights, computed here in double
//   mlp_f16.onnx, mlp_bf16.onnx, mlp_f64.onnx
//                     the MLP exported after .half(), .bfloat16(), .double()
//   half_mask.onnx    a float16 causal mask (0 / -65504) added to x
//   mlp_ext.onnx, mlp_ext.weights
//                     the MLP with its weights as external data
//   scalar_loss.onnx  x, y -> MatMul -> Sub -> Mul -> ReduceMean (a scalar)
//   shape_chain.onnx  Shape -> Gather -> Unsqueeze -> Concat -> Reshape
//   unsupported.onnx  a Hardmax node named "my_hardmax"
//   dynamic.onnx      an input with dims [N, seq]
//   bad_add.onnx      Add of [N,4] and [3] (a shape error at the node)
//   cnn.onnx          Conv -> BatchNormalization (training mode) -> LeakyRelu
//                     -> MaxPool -> Flatten -> Gemm, x[N,1,6,6] -> [N,3];
//                     cnn_x.npy, cnn_label.npy: a batch of 4
//   mobile.onnx       Conv -> InstanceNormalization -> PRelu -> HardSwish ->
//                     HardSigmoid gate -> GlobalMaxPool/GlobalAveragePool ->
//                     Sum, Mean -> Gemm; mobile_x.npy, mobile_label.npy
//   prelu_kink.onnx   u * x -> PRelu, x = (0, 0, 1, -1); prelu_u.npy (ones),
//                     prelu_t.npy (targets -1)
//   indexing.onnx     Tile -> Gemm -> CumSum -> Softsign -> GatherElements,
//                     and ArgMax; indexing_x.npy, indexing_label.npy
//   sequence.onnx     x @ w -> SplitToSequence (chunks of 4: 4 + 2) ->
//                     SequenceAt(-1), and SequenceAt(0) -> SplitToSequence
//                     (keepdims 0) -> SequenceAt(2) -> Unsqueeze -> Concat:
//                     logits[4,3]; sequence_pos.onnx reads its position
//                     from a graph input (refused)
//   gelu.onnx         PyTorch's exact GELU below opset 20:
//                     Div(sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)
//   attn_div.onnx     q, k, v [2,2,4,8] -> MatMul(q, Transpose(k)) ->
//                     Div(2) -> Softmax -> MatMul(v): no mask, scale 0.5
//   attn_where.onnx   the same with Mul(0.25, scores) (constant first) and
//                     Where(tril, scores, -inf): causal, scale 0.25
//   attn_pad.onnx     the same with Add of a padding mask (the last key
//                     -inf for every query): not causal, imported unfused
//   resize_nearest.onnx  x[N,2,3,4] -> Resize(scales 1.5, 2) -> Resize(sizes
//                     5x9) -> GlobalAveragePool, nearest/asymmetric/floor
//   resize_linear.onnx, resize_linear_ac.onnx, resize_cubic.onnx,
//   resize_linear_keep.onnx, resize_linear_ac_keep.onnx
//                     the same with a bilinear first Resize (align_corners
//                     False, True), a bicubic one (not supported), or a
//                     bilinear scale 1.2 that keeps height 3 (refused; with
//                     align_corners imported)
//   malformed_*.onnx  one defect each, from fuzzing (onnx-malformed.test):
//                     a node without output or input, a value defined
//                     twice, negative and huge shapes to fold or reshape,
//                     a repeated Unsqueeze axis, an attribute of the wrong
//                     kind, a GatherElements index out of range, a PRelu
//                     slope wider than its input; linear_1.onnx: Linear(4, 1), a one-element bias;
//                     shared_scalar.onnx: one scalar both a Linear's Add and
//                     a Pow exponent (stays a constant); zeros_like_big.onnx:
//                     ConstantOfShape of 2^26 + 8192 elements (a splat);
//                     ctrl_names.onnx: values named "a\n" and "a\t";
//                     shared_norm.onnx: two LayerNorms sharing val_1, val_2;
//                     malformed_ext_*.onnx: external data outside the
//                     model's directory, missing, a link, past the end of
//                     ext.bin, too short, a bad offset, a directory, an
//                     offset past the end (ext_ok reads it);
//                     malformed_raw_wrap.onnx: 2^62 floats in 0 bytes
// and the recurrent models of GenRecurrentModels.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/GenBuilder.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace ampc::onnxgen;

// A causal mask as the dynamo exporter writes it after .half(): 0 and
// -65504 (float16's lowest), added to the scores.
bool halfMask(const std::string &dir) {
  Builder m("half_mask");
  m.input("x", TensorProto::FLOAT16, {"2", "4", "4"});
  std::vector<float> mask(16);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      mask[i * 4 + j] = j > i ? -65504.0f : 0.0f;
  m.initTyped("mask", TensorProto::FLOAT16, {4, 4}, mask);
  m.node("Add", "masked", {"x", "mask"}, {"s"});
  Builder::intAttr(m.node("Softmax", "softmax", {"s"}, {"y"}), "axis", -1);
  m.output("y");
  return m.write(dir + "/half_mask.onnx");
}

// The MLP in FLOAT, or exported after .half(), .bfloat16() or .double()
// (mlp_f16.onnx, mlp_bf16.onnx, mlp_f64.onnx: the same graph, its input and
// weights of that type); the batch and its loss are written with the FLOAT
// one.
bool mlp(const std::string &dir, int type = TensorProto::FLOAT) {
  const int n = 8, in = 4, hidden = 8, classes = 3;
  auto w1 = values(hidden * in, 0.1, 0.5), b1 = values(hidden, 0.2, 0.1);
  auto w2 = values(classes * hidden, 0.3, 0.5), b2 = values(classes, 0.4, 0.1);
  const char *suffix = type == TensorProto::FLOAT16    ? "_f16"
                       : type == TensorProto::BFLOAT16 ? "_bf16"
                       : type == TensorProto::DOUBLE   ? "_f64"
                                                       : "";
  Builder m("mlp");
  m.input("x", type, {"N", "4"});
  auto weight = [&](const std::string &name, const std::vector<int64_t> &shape,
                    const std::vector<float> &v) {
    if (type == TensorProto::FLOAT)
      m.init(name, shape, v);
    else
      m.initTyped(name, type, shape, v);
  };
  weight("fc1.weight", {hidden, in}, w1);
  weight("fc1.bias", {hidden}, b1);
  weight("fc2.weight", {classes, hidden}, w2);
  weight("fc2.bias", {classes}, b2);
  Builder::intAttr(
      m.node("Gemm", "/fc1/Gemm", {"x", "fc1.weight", "fc1.bias"}, {"h"}),
      "transB", 1);
  m.node("Relu", "/act/Relu", {"h"}, {"a"});
  Builder::intAttr(
      m.node("Gemm", "/fc2/Gemm", {"a", "fc2.weight", "fc2.bias"}, {"logits"}),
      "transB", 1);
  m.output("logits");
  if (!m.write(dir + "/mlp" + suffix + ".onnx"))
    return false;
  if (type != TensorProto::FLOAT)
    return true;
  if (!m.externalize(dir, "mlp_ext.weights") ||
      !m.write(dir + "/mlp_ext.onnx"))
    return false;
  // The batch and its loss, in double.
  auto x = values(n * in, 0.5, 1.0);
  std::vector<int64_t> label(n);
  double loss = 0;
  for (int r = 0; r < n; ++r) {
    label[r] = r % classes;
    double a[hidden], z[classes], zmax = -1e300, sum = 0;
    for (int j = 0; j < hidden; ++j) {
      double s = b1[j];
      for (int k = 0; k < in; ++k)
        s += double(w1[j * in + k]) * x[r * in + k];
      a[j] = s > 0 ? s : 0;
    }
    for (int c = 0; c < classes; ++c) {
      double s = b2[c];
      for (int j = 0; j < hidden; ++j)
        s += double(w2[c * hidden + j]) * a[j];
      z[c] = s;
      zmax = std::max(zmax, s);
    }
    for (int c = 0; c < classes; ++c)
      sum += std::exp(z[c] - zmax);
    loss += std::log(sum) + zmax - z[label[r]];
  }
  loss /= n;
  std::ofstream(dir + "/mlp_loss.txt") << std::to_string(loss) << "\n";
  return writeNpy(dir + "/mlp_x.npy", "<f4", {n, in}, x.data(), x.size() * 4) &&
         writeNpy(dir + "/mlp_label.npy", "<i8", {n}, label.data(), n * 8);
}

bool scalarLoss(const std::string &dir) {
  Builder m("regression");
  m.input("x", TensorProto::FLOAT, {"batch", "4"});
  m.input("y", TensorProto::FLOAT, {"batch", "1"});
  m.init("w", {4, 1}, values(4, 0.0, 0.3));
  m.node("MatMul", "pred", {"x", "w"}, {"p"});
  m.node("Sub", "err", {"p", "y"}, {"e"});
  m.node("Mul", "sq", {"e", "e"}, {"e2"});
  Builder::intAttr(m.node("ReduceMean", "mean", {"e2"}, {"loss"}), "keepdims",
                   0);
  m.output("loss");
  return m.write(dir + "/scalar_loss.onnx");
}

bool shapeChain(const std::string &dir) {
  Builder m("chain");
  m.input("x", TensorProto::FLOAT, {"N", "2", "3"});
  m.initInts("zero", {0});
  m.initInts("minus1", {-1});
  m.node("Shape", "shape", {"x"}, {"s"});
  Builder::intAttr(m.node("Gather", "batch_dim", {"s", "zero"}, {"n"}), "axis",
                   0);
  m.node("Concat", "target", {"n", "minus1"}, {"t"})->add_attribute();
  m.g->mutable_node(2)->mutable_attribute(0)->set_name("axis");
  m.g->mutable_node(2)->mutable_attribute(0)->set_type(
      onnx::AttributeProto::INT);
  m.g->mutable_node(2)->mutable_attribute(0)->set_i(0);
  m.node("Reshape", "flatten", {"x", "t"}, {"y"});
  m.output("y");
  return m.write(dir + "/shape_chain.onnx");
}

bool unsupported(const std::string &dir) {
  Builder m("unsupported");
  m.input("x", TensorProto::FLOAT, {"2", "3"});
  m.node("Relu", "act", {"x"}, {"a"});
  m.node("Hardmax", "my_hardmax", {"a"}, {"y"});
  m.output("y");
  return m.write(dir + "/unsupported.onnx");
}

bool dynamic(const std::string &dir) {
  Builder m("dynamic");
  m.input("ids", TensorProto::FLOAT, {"N", "seq"});
  m.node("Relu", "act", {"ids"}, {"y"});
  m.output("y");
  return m.write(dir + "/dynamic.onnx");
}

bool badAdd(const std::string &dir) {
  Builder m("bad");
  m.input("x", TensorProto::FLOAT, {"N", "4"});
  m.init("b", {3}, values(3, 0, 1));
  m.node("Add", "/layer/add_bias", {"x", "b"}, {"y"});
  m.output("y");
  return m.write(dir + "/bad_add.onnx");
}

bool cnn(const std::string &dir) {
  Builder m("cnn");
  m.input("x", TensorProto::FLOAT, {"N", "1", "6", "6"});
  m.init("conv.weight", {4, 1, 3, 3}, values(36, 0.1, 0.4));
  m.init("conv.bias", {4}, values(4, 0.2, 0.1));
  m.init("bn.weight", {4}, values(4, 1.0, 0.5));
  m.init("bn.bias", {4}, values(4, 0.3, 0.1));
  m.init("bn.running_mean", {4}, values(4, 0.0, 0.0));
  m.init("bn.running_var", {4}, std::vector<float>(4, 1.0f));
  m.init("fc.weight", {3, 16}, values(48, 0.4, 0.3));
  m.init("fc.bias", {3}, values(3, 0.5, 0.1));
  auto *conv =
      m.node("Conv", "/conv/Conv", {"x", "conv.weight", "conv.bias"}, {"c"});
  Builder::intsAttr(conv, "pads", {1, 1, 1, 1});
  Builder::intsAttr(conv, "kernel_shape", {3, 3});
  auto *bn =
      m.node("BatchNormalization", "/bn/BatchNormalization",
             {"c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"},
             {"b"});
  Builder::intAttr(bn, "training_mode", 1);
  auto *act = m.node("LeakyRelu", "/act/LeakyRelu", {"b"}, {"a"});
  auto *alpha = act->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.1f);
  auto *pool = m.node("MaxPool", "/pool/MaxPool", {"a"}, {"p"});
  Builder::intsAttr(pool, "kernel_shape", {3, 3});
  Builder::intsAttr(pool, "strides", {3, 3});
  m.node("Flatten", "/Flatten", {"p"}, {"f"});
  Builder::intAttr(
      m.node("Gemm", "/fc/Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}),
      "transB", 1);
  m.output("logits");
  auto x = values(4 * 36, 0.9, 1.0);
  std::vector<int64_t> label = {0, 1, 2, 1};
  return m.write(dir + "/cnn.onnx") &&
         writeNpy(dir + "/cnn_x.npy", "<f4", {4, 1, 6, 6}, x.data(),
                  x.size() * 4) &&
         writeNpy(dir + "/cnn_label.npy", "<i8", {4}, label.data(), 4 * 8);
}

// MobileNet-style blocks: Conv -> InstanceNormalization -> PRelu (one
// slope, nn.PReLU()) -> HardSwish -> x * HardSigmoid(x) (a gate) ->
// GlobalMaxPool and GlobalAveragePool -> Sum and Mean of them -> Gemm.
bool mobile(const std::string &dir) {
  Builder m("mobile", 17);
  m.input("x", TensorProto::FLOAT, {"N", "2", "6", "6"});
  m.init("conv.weight", {4, 2, 3, 3}, values(72, 0.1, 0.4));
  m.init("conv.bias", {4}, values(4, 0.2, 0.1));
  m.init("in.weight", {4}, values(4, 1.0, 0.5));
  m.init("in.bias", {4}, values(4, 0.3, 0.1));
  m.init("act.weight", {1}, {0.25f});
  m.init("fc.weight", {3, 4}, values(12, 0.4, 0.3));
  m.init("fc.bias", {3}, values(3, 0.5, 0.1));
  auto *conv =
      m.node("Conv", "/conv/Conv", {"x", "conv.weight", "conv.bias"}, {"c"});
  Builder::intsAttr(conv, "pads", {1, 1, 1, 1});
  m.node("InstanceNormalization", "/in/InstanceNormalization",
         {"c", "in.weight", "in.bias"}, {"i"});
  m.node("PRelu", "/act/PRelu", {"i", "act.weight"}, {"p"});
  m.node("HardSwish", "/hs/HardSwish", {"p"}, {"h"});
  auto *gate = m.node("HardSigmoid", "/gate/HardSigmoid", {"h"}, {"g"});
  auto *alpha = gate->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(1.0f / 6.0f);
  m.node("Mul", "/gate/Mul", {"h", "g"}, {"se"});
  m.node("GlobalMaxPool", "/maxpool/GlobalMaxPool", {"se"}, {"gm"});
  m.node("GlobalAveragePool", "/avgpool/GlobalAveragePool", {"se"}, {"ga"});
  m.node("Sum", "/Sum", {"gm", "ga"}, {"s"});
  m.node("Mean", "/Mean", {"gm", "ga", "s"}, {"mm"});
  m.node("Flatten", "/Flatten", {"mm"}, {"f"});
  Builder::intAttr(
      m.node("Gemm", "/fc/Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}),
      "transB", 1);
  m.output("logits");
  auto x = values(4 * 72, 0.9, 1.5);
  std::vector<int64_t> label = {0, 1, 2, 1};
  return m.write(dir + "/mobile.onnx") &&
         writeNpy(dir + "/mobile_x.npy", "<f4", {4, 2, 6, 6}, x.data(),
                  x.size() * 4) &&
         writeNpy(dir + "/mobile_label.npy", "<i8", {4}, label.data(), 4 * 8);
}

// Tile -> Gemm -> CumSum -> Softsign -> GatherElements (negative constant
// indices) -> logits, and ArgMax of them as a second output.
// The dynamo exporter's Tensor.split: SplitToSequence and SequenceAt.
bool sequence(const std::string &dir) {
  auto model = [&](bool badPosition) {
    Builder m("sequence", 17);
    m.input("x", TensorProto::FLOAT, {"4", "6"});
    m.init("w", {6, 6}, values(36, 0.2, 0.5));
    m.initInts("four", {4});
    m.g->mutable_initializer(m.g->initializer_size() - 1)->clear_dims();
    m.initInts("last", {-1});
    m.g->mutable_initializer(m.g->initializer_size() - 1)->clear_dims();
    m.initInts("first", {0});
    m.g->mutable_initializer(m.g->initializer_size() - 1)->clear_dims();
    m.initInts("third", {2});
    m.g->mutable_initializer(m.g->initializer_size() - 1)->clear_dims();
    m.initInts("axis1", {1});
    m.node("MatMul", "/MatMul", {"x", "w"}, {"h"});
    Builder::intAttr(
        m.node("SplitToSequence", "/split", {"h", "four"}, {"seq"}), "axis",
        1);
    if (badPosition) {
      m.input("pos", TensorProto::INT64, {});
      m.node("SequenceAt", "/at_last", {"seq", "pos"}, {"tail"});
    } else {
      m.node("SequenceAt", "/at_last", {"seq", "last"}, {"tail"});
    }
    m.node("SequenceAt", "/at_first", {"seq", "first"}, {"head"});
    auto *cols = m.node("SplitToSequence", "/columns", {"head"}, {"cols"});
    Builder::intAttr(cols, "axis", 1);
    Builder::intAttr(cols, "keepdims", 0);
    m.node("SequenceAt", "/at_third", {"cols", "third"}, {"c"});
    m.node("Unsqueeze", "/Unsqueeze", {"c", "axis1"}, {"cu"});
    Builder::intAttr(m.node("Concat", "/Concat", {"tail", "cu"}, {"logits"}),
                     "axis", 1);
    m.output("logits");
    return m.write(dir + (badPosition ? "/sequence_pos.onnx"
                                      : "/sequence.onnx"));
  };
  return model(false) && model(true);
}

bool indexing(const std::string &dir) {
  Builder m("indexing", 17);
  m.input("x", TensorProto::FLOAT, {"4", "4"});
  m.initInts("repeats", {1, 2});
  m.init("fc.weight", {3, 8}, values(24, 0.4, 0.3));
  m.init("fc.bias", {3}, values(3, 0.5, 0.1));
  m.initInts("axis", {1});
  m.g->mutable_initializer(m.g->initializer_size() - 1)->clear_dims();
  auto *idx = m.g->add_initializer();
  idx->set_name("perm");
  idx->set_data_type(TensorProto::INT64);
  idx->add_dims(4);
  idx->add_dims(3);
  // The same order in every row (rows are shuffled samples), written with
  // and without negative indices.
  for (int64_t v : {2, 0, 1, -1, -3, -2, 2, 0, 1, -1, 0, 1})
    idx->add_int64_data(v);
  m.node("Tile", "/Tile", {"x", "repeats"}, {"t"});
  Builder::intAttr(
      m.node("Gemm", "/fc/Gemm", {"t", "fc.weight", "fc.bias"}, {"h"}),
      "transB", 1);
  m.node("CumSum", "/CumSum", {"h", "axis"}, {"c"});
  m.node("Softsign", "/Softsign", {"c"}, {"s"});
  Builder::intAttr(
      m.node("GatherElements", "/GatherElements", {"s", "perm"}, {"logits"}),
      "axis", 1);
  Builder::intAttr(m.node("ArgMax", "/ArgMax", {"logits"}, {"pred"}), "axis",
                   1);
  m.output("logits");
  m.output("pred");
  auto x = values(16, 0.9, 1.5);
  std::vector<int64_t> label = {0, 1, 2, 1};
  return m.write(dir + "/indexing.onnx") &&
         writeNpy(dir + "/indexing_x.npy", "<f4", {4, 4}, x.data(),
                  x.size() * 4) &&
         writeNpy(dir + "/indexing_label.npy", "<i8", {4}, label.data(),
                  4 * 8);
}

// PRelu at its kink: a parameter x = (0, 0, 1, -1) through PRelu(slope
// 0.25) against targets t (prelu_t.npy, all -1), so that the loss's
// gradient at each output is nonzero.
bool preluKink(const std::string &dir) {
  Builder m("prelu_kink", 17);
  m.input("u", TensorProto::FLOAT, {"1", "4"});
  m.init("x", {1, 4}, {0.0f, 0.0f, 1.0f, -1.0f});
  m.init("slope", {1}, {0.25f});
  m.node("Mul", "/scale", {"u", "x"}, {"ux"});
  m.node("PRelu", "/act/PRelu", {"ux", "slope"}, {"p"});
  m.output("p");
  std::vector<float> u(4, 1.0f), t(4, -1.0f);
  return m.write(dir + "/prelu_kink.onnx") &&
         writeNpy(dir + "/prelu_u.npy", "<f4", {1, 4}, u.data(), 16) &&
         writeNpy(dir + "/prelu_t.npy", "<f4", {1, 4}, t.data(), 16);
}

bool geluErf(const std::string &dir) {
  Builder m("gelu");
  m.input("x", TensorProto::FLOAT, {"N", "4"});
  auto scalar = [&](const std::string &name, float v) {
    auto *n = m.node("Constant", name, {}, {name});
    auto *a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  };
  scalar("sqrt2", 1.4142135381698608f);
  scalar("one", 1.0f);
  scalar("half", 0.5f);
  m.node("Div", "/act/Div", {"x", "sqrt2"}, {"d"});
  m.node("Erf", "/act/Erf", {"d"}, {"e"});
  m.node("Add", "/act/Add", {"e", "one"}, {"a"});
  m.node("Mul", "/act/Mul", {"x", "a"}, {"m"});
  m.node("Mul", "/act/Mul_1", {"m", "half"}, {"y"});
  m.output("y");
  return m.write(dir + "/gelu.onnx");
}

// Attention subgraphs as hand-written code exports them; |variant| is
// "div", "where" or "pad" (see the file comment).
bool attention(const std::string &dir, const std::string &variant) {
  Builder m("attn_" + variant);
  for (const char *name : {"q", "k", "v"})
    m.input(name, TensorProto::FLOAT, {"2", "2", "4", "8"});
  auto scalar = [&](const std::string &name, float v) {
    auto *n = m.node("Constant", name, {}, {name});
    auto *a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  };
  Builder::intsAttr(m.node("Transpose", "/attn/Transpose", {"k"}, {"kT"}),
                    "perm", {0, 1, 3, 2});
  m.node("MatMul", "/attn/MatMul", {"q", "kT"}, {"s"});
  std::string scores = "s";
  if (variant == "where") {
    scalar("quarter", 0.25f);
    m.node("Mul", "/attn/Mul", {"quarter", "s"}, {"ss"});
    auto *t = m.g->add_initializer();
    t->set_name("tril");
    t->set_data_type(TensorProto::BOOL);
    for (int64_t d : {1, 1, 4, 4})
      t->add_dims(d);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        t->add_int32_data(j <= i);
    scalar("ninf", -INFINITY);
    m.node("Where", "/attn/Where", {"tril", "ss", "ninf"}, {"masked"});
    scores = "masked";
  } else {
    scalar("two", 2.0f);
    m.node("Div", "/attn/Div", {"s", "two"}, {"ss"});
    scores = "ss";
    if (variant == "pad") {
      std::vector<float> pad(16, 0.0f);
      for (int i = 0; i < 4; ++i)
        pad[i * 4 + 3] = -INFINITY;
      m.init("pad_mask", {4, 4}, pad);
      m.node("Add", "/attn/Add", {"ss", "pad_mask"}, {"masked"});
      scores = "masked";
    }
  }
  Builder::intAttr(m.node("Softmax", "/attn/Softmax", {scores}, {"p"}), "axis",
                   -1);
  m.node("MatMul", "/attn/MatMul_1", {"p", "v"}, {"y"});
  m.output("y");
  return m.write(dir + "/attn_" + variant + ".onnx");
}

// torch.onnx's F.interpolate(mode="nearest") (Resize: asymmetric, floor)
// by scales, then by sizes, then GlobalAveragePool; with |mode| "linear"
// the first Resize is bilinear (an import error).
// |variant| names the first Resize: nearest (F.interpolate's nearest),
// linear (bilinear, align_corners=False: pytorch_half_pixel), linear_ac
// (bilinear, align_corners=True), cubic (not supported), linear_keep
// (scale 1.2 on height 3: a size kept by a scale other than 1),
// linear_ac_keep (the same with align_corners, which maps by the sizes).
bool resize(const std::string &dir, const std::string &variant) {
  Builder m("resize", 13);
  m.input("x", TensorProto::FLOAT, {"N", "2", "3", "4"});
  m.init("scales", {4},
         {1.0f, 1.0f,
          variant == "linear_keep" || variant == "linear_ac_keep" ? 1.2f
                                                                  : 1.5f,
          2.0f});
  m.initInts("sizes", {2, 2, 5, 9});
  const bool corners = variant == "linear_ac" || variant == "linear_ac_keep";
  const std::string mode =
      corners || variant == "linear_keep" ? "linear" : variant;
  const std::string map = corners ? "align_corners"
                          : mode == "linear"       ? "pytorch_half_pixel"
                                                   : "asymmetric";
  auto attrs = [&](onnx::NodeProto *n, const std::string &mo) {
    for (auto [k, v] : {std::pair<std::string, std::string>{"mode", mo},
                        {"coordinate_transformation_mode",
                         mo == "nearest" ? "asymmetric" : map},
                        {"nearest_mode", "floor"}}) {
      auto *a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(v);
    }
  };
  attrs(m.node("Resize", "/up/Resize", {"x", "", "scales"}, {"u"}), mode);
  attrs(m.node("Resize", "/up2/Resize", {"u", "", "", "sizes"}, {"v"}),
        "nearest");
  m.node("GlobalAveragePool", "/pool/GlobalAveragePool", {"v"}, {"y"});
  m.output("y");
  return m.write(dir + "/resize_" + variant + ".onnx");
}

// Each file holds x[2,3] -> Mul(w) -> m, then the defect.
bool malformed(const std::string &dir) {
  auto base = [](const std::string &name) {
    auto m = std::make_unique<Builder>(name);
    m->input("x", TensorProto::FLOAT, {"2", "3"});
    m->init("w", {3}, values(3, 0, 1));
    m->node("Mul", "scale", {"x", "w"}, {"m"});
    return m;
  };
  auto write = [&](std::unique_ptr<Builder> &m, const std::string &name) {
    return m->write(dir + "/malformed_" + name + ".onnx");
  };
  bool ok = true;
  auto m = base("no_output");
  m->node("Relu", "act", {"m"}, {});
  m->output("m");
  ok &= write(m, "no_output");
  m = base("no_input");
  m->node("Concat", "join", {}, {"y"});
  m->output("y");
  ok &= write(m, "no_input");
  m = base("twice");
  m->node("Relu", "first", {"m"}, {"y"});
  m->node("Neg", "second", {"m"}, {"y"});
  m->output("y");
  ok &= write(m, "twice");
  m = base("range_huge"); // 2^50 elements to fold
  m->initInts("start", {0});
  m->initInts("limit", {int64_t(1) << 50});
  m->initInts("delta", {1});
  for (int i = 1; i < m->g->initializer_size(); ++i) // scalars, after w
    m->g->mutable_initializer(i)->clear_dims();
  m->node("Range", "r", {"start", "limit", "delta"}, {"y"});
  m->output("y");
  ok &= write(m, "range_huge");
  m = base("expand_negative");
  m->initInts("shape", {-5, 2, 3}); // a new leading dim of -5
  m->node("Expand", "e", {"m", "shape"}, {"y"});
  m->output("y");
  ok &= write(m, "expand_negative");
  m = base("reshape_negative");
  m->initInts("shape", {-2, -3});
  m->node("Reshape", "r", {"m", "shape"}, {"y"});
  m->output("y");
  ok &= write(m, "reshape_negative");
  m = base("unsqueeze_twice");
  m->initInts("axes", {0, 0});
  m->node("Unsqueeze", "u", {"m", "axes"}, {"y"});
  m->output("y");
  ok &= write(m, "unsqueeze_twice");
  m = base("uint64"); // 2^64 - 1, cast to float
  auto *u = m->g->add_initializer();
  u->set_name("big");
  u->set_data_type(TensorProto::UINT64);
  u->add_uint64_data(~uint64_t(0));
  Builder::intAttr(m->node("Cast", "cast", {"big"}, {"c"}), "to",
                   TensorProto::FLOAT);
  m->node("Add", "plus", {"m", "c"}, {"y"});
  m->output("y");
  ok &= write(m, "uint64");
  m = base("raw_wrap"); // 2^62 floats in no bytes: 2^62 * 4 wraps to 0
  auto *wrap = m->g->add_initializer();
  wrap->set_name("huge");
  wrap->set_data_type(TensorProto::FLOAT);
  wrap->add_dims(int64_t(1) << 62);
  wrap->set_raw_data("");
  m->node("Add", "plus", {"m", "huge"}, {"y"});
  m->output("y");
  ok &= write(m, "raw_wrap");
  m = base("gather_range"); // index 5 on an axis of 3
  m->initInts("idx", {0, 1, 5});
  m->g->mutable_initializer(m->g->initializer_size() - 1)->clear_dims();
  m->g->mutable_initializer(m->g->initializer_size() - 1)->add_dims(1);
  m->g->mutable_initializer(m->g->initializer_size() - 1)->add_dims(3);
  Builder::intAttr(m->node("GatherElements", "g", {"m", "idx"}, {"y"}), "axis",
                   1);
  m->output("y");
  ok &= write(m, "gather_range");
  m = base("prelu_wide"); // a slope [4, 2, 3] wider than x [2, 3]
  m->init("slope", {4, 2, 3}, values(24, 0.1, 0.2));
  m->node("PRelu", "p", {"m", "slope"}, {"y"});
  m->output("y");
  ok &= write(m, "prelu_wide");
  // INT64_MIN / -1 and INT64_MIN % -1 folded with idiv trapped (SIGFPE);
  // they wrap now: shape = 0 + (INT64_MIN / -1) * 0 + 6 = [6].
  m = base("int_wrap");
  m->initInts("min", {std::numeric_limits<int64_t>::min()});
  m->initInts("minus1", {-1});
  m->initInts("zero", {0});
  m->initInts("six", {6});
  m->node("Div", "q", {"min", "minus1"}, {"q"});
  m->node("Mod", "r", {"min", "minus1"}, {"r"});
  m->node("Mul", "q0", {"q", "zero"}, {"q0"});
  m->node("Add", "rq", {"r", "q0"}, {"rq"});
  m->node("Add", "shape", {"rq", "six"}, {"shape"});
  m->node("Reshape", "flat", {"m", "shape"}, {"y"});
  m->output("y");
  ok &= write(m, "int_wrap");
  m = base("attr_kind"); // LeakyRelu's alpha is a float
  Builder::intAttr(m->node("LeakyRelu", "leaky", {"m"}, {"y"}), "alpha", 2);
  m->output("y");
  ok &= write(m, "attr_kind");
  // Linear(4, 1) as the exporters write it for N-D inputs.
  Builder l("linear_1");
  l.input("x", TensorProto::FLOAT, {"2", "4"});
  l.init("weight", {4, 1}, values(4, 0, 1));
  l.init("bias", {1}, {0.5f});
  l.node("MatMul", "fc", {"x", "weight"}, {"h"});
  l.node("Add", "fc_bias", {"h", "bias"}, {"y"});
  l.output("y");
  ok &= l.write(dir + "/linear_1.onnx");
  Builder sc("shared_scalar");
  sc.input("x", TensorProto::FLOAT, {"2", "4"});
  sc.init("weight", {4, 3}, values(12, 0, 1));
  sc.init("two", {}, {2.0f});
  sc.node("MatMul", "fc", {"x", "weight"}, {"h"});
  sc.node("Add", "plus_two", {"h", "two"}, {"a"});
  sc.node("Pow", "square", {"a", "two"}, {"y"});
  sc.output("y");
  ok &= sc.write(dir + "/shared_scalar.onnx");
  Builder z("zeros_like_big"); // torch.zeros_like(x) + x
  z.input("x", TensorProto::FLOAT, {"1", "8192", "8193"});
  z.node("Shape", "shape", {"x"}, {"s"});
  z.node("ConstantOfShape", "zeros", {"s"}, {"zeros"});
  z.node("Add", "sum", {"zeros", "x"}, {"y"});
  z.output("y");
  ok &= z.write(dir + "/zeros_like_big.onnx");
  // External data that must not be read: w's 12 bytes are in ext.bin.
  auto external = [&](const std::string &name, const std::string &key,
                      const std::string &value) {
    auto e = base(name);
    e->node("Relu", "act", {"m"}, {"y"});
    e->output("y");
    ok &= e->externalize(dir, "ext.bin");
    TensorProto *w = e->g->mutable_initializer(0);
    onnx::StringStringEntryProto *kv = nullptr;
    for (auto &old : *w->mutable_external_data())
      if (old.key() == key)
        kv = &old;
    if (!kv)
      kv = w->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
    ok &= write(e, name);
  };
  external("ext_escape", "location", "../ext.bin");
  external("ext_absolute", "location", "/etc/passwd");
  external("ext_missing", "location", "missing.bin");
  external("ext_link", "location", "link.bin"); // the test makes the links
  external("ext_dir_link", "location", "outside/ext.bin");
  external("ext_directory", "location", "adir"); // the test makes adir
  external("ext_offset_past", "offset", "20");
  external("ext_past_end", "length", "16");
  external("ext_short", "length", "8");
  external("ext_bad_offset", "offset", "12abc");
  external("ext_ok", "offset", "0");
  // Two LayerNorms reading one weight and one bias, as the dynamo
  // exporter writes freshly initialised norms (it merges equal values).
  Builder sn("shared_norm");
  sn.input("x", TensorProto::FLOAT, {"2", "4"});
  sn.init("val_1", {4}, std::vector<float>(4, 1.0f));
  sn.init("val_2", {4}, std::vector<float>(4, 0.0f));
  sn.node("LayerNormalization", "node_ln_1", {"x", "val_1", "val_2"}, {"a"});
  sn.node("Relu", "node_relu", {"a"}, {"r"});
  sn.node("LayerNormalization", "node_ln_2", {"r", "val_1", "val_2"}, {"y"});
  sn.output("y");
  ok &= sn.write(dir + "/shared_norm.onnx");
  Builder c("ctrl_names");
  c.input("x", TensorProto::FLOAT, {"2", "3"});
  c.node("Relu", "r1", {"x"}, {"a\n"});
  c.node("Neg", "r2", {"x"}, {"a\t"});
  c.node("Add", "sum", {"a\n", "a\t"}, {"y"});
  c.output("y");
  ok &= c.write(dir + "/ctrl_names.onnx");
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ampc-onnx-gen DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  if (!mlp(dir) || !mlp(dir, TensorProto::FLOAT16) ||
      !mlp(dir, TensorProto::BFLOAT16) || !mlp(dir, TensorProto::DOUBLE) ||
      !halfMask(dir) ||
      !scalarLoss(dir) || !shapeChain(dir) || !unsupported(dir) ||
      !dynamic(dir) || !badAdd(dir) || !geluErf(dir) || !cnn(dir) ||
      !mobile(dir) || !indexing(dir) || !sequence(dir) || !preluKink(dir) ||
      !attention(dir, "div") || !attention(dir, "where") ||
      !attention(dir, "pad") || !resize(dir, "nearest") ||
      !resize(dir, "linear") || !resize(dir, "linear_ac") ||
      !resize(dir, "cubic") || !resize(dir, "linear_keep") ||
      !resize(dir, "linear_ac_keep") ||
      !malformed(dir) || !writeRecurrentModels(dir)) {
    std::fprintf(stderr, "ampc-onnx-gen: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
