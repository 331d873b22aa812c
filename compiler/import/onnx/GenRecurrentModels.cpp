//===- GenRecurrentModels.cpp - Recurrent models for the import tests -----===//
//
//   lstm.onnx     x[N,6,3] -> Transpose -> LSTM (bidirectional, hidden 4)
//                 -> Y_h -> Transpose -> Flatten -> Gemm -> logits[N,3],
//                 as torch.onnx writes nn.LSTM(batch_first=True);
//                 lstm_x.npy, lstm_label.npy: a batch of 4; lstm_loss.txt,
//                 its mean cross entropy computed here in double by ONNX's
//                 formulas
//   gru.onnx      x[4,5,3] -> GRU (layout 1, linear_before_reset, a learned
//                 initial_h expanded to the batch) -> Y -> Reshape -> Gemm
//                 -> logits[4,3];
//                 gru_x.npy, gru_label.npy, gru_loss.txt
//   rnn_mix.onnx  x[4,2,3] -> LSTM (peepholes, initial_h and initial_c,
//                 clip) -> RNN (reverse, Relu) -> GRU (ONNX's default
//                 reset) -> Y_h -> logits[2,3]: the rest of the attributes,
//                 for a gradient check
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/GenBuilder.h"

#include <algorithm>
#include <cstdio>

namespace ampc::onnxgen {
namespace {

void stringsAttr(onnx::NodeProto *n, const std::string &name,
                 const std::vector<std::string> &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string &x : v)
    a->add_strings(x);
}

void stringAttr(onnx::NodeProto *n, const std::string &name,
                const std::string &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void floatAttr(onnx::NodeProto *n, const std::string &name, float v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One direction of ONNX's LSTM (gates i, o, f, c) or GRU (z, r, h with
// linear_before_reset: h~ = tanh(x W_h + Wb_h + r (h R_h + Rb_h)), h' =
// (1 - z) h~ + z h), in double, over x time-major [T, B, I]. Returns the
// hidden state of every step, [T, B, H] in time order.
std::vector<double> reference(bool isLstm, const std::vector<float> &x,
                              int t, int b, int in, int h,
                              const float *w, const float *r,
                              const float *bias, std::vector<double> hs,
                              bool reverse) {
  int g = isLstm ? 4 : 3;
  std::vector<double> cs(size_t(b * h), 0.0), ys(size_t(t * b * h));
  for (int k = 0; k < t; ++k) {
    int ti = reverse ? t - 1 - k : k;
    std::vector<double> hNext(hs.size());
    for (int bi = 0; bi < b; ++bi) {
      std::vector<double> xw(size_t(g * h)), hr(size_t(g * h));
      for (int row = 0; row < g * h; ++row) {
        xw[size_t(row)] = bias[row];
        hr[size_t(row)] = bias[g * h + row];
        for (int i = 0; i < in; ++i)
          xw[size_t(row)] +=
              double(w[row * in + i]) * x[size_t((ti * b + bi) * in + i)];
        for (int j = 0; j < h; ++j)
          hr[size_t(row)] += double(r[row * h + j]) * hs[size_t(bi * h + j)];
      }
      for (int j = 0; j < h; ++j) {
        size_t at = size_t(bi * h + j);
        auto pre = [&](int gate) {
          return xw[size_t(gate * h + j)] + hr[size_t(gate * h + j)];
        };
        if (isLstm) {
          double ig = sigmoid(pre(0)), og = sigmoid(pre(1)),
                 fg = sigmoid(pre(2)), cg = std::tanh(pre(3));
          cs[at] = fg * cs[at] + ig * cg;
          hNext[at] = og * std::tanh(cs[at]);
        } else {
          double z = sigmoid(pre(0)), rg = sigmoid(pre(1));
          double n = std::tanh(xw[size_t(2 * h + j)] +
                               rg * hr[size_t(2 * h + j)]);
          hNext[at] = (1.0 - z) * n + z * hs[at];
        }
      }
    }
    hs = hNext;
    std::copy(hs.begin(), hs.end(), ys.begin() + ti * b * h);
  }
  return ys;
}

// Mean cross entropy of logits = f W^T + bias over the labels.
double meanCrossEntropy(const std::vector<double> &f, int b, int k,
                        const std::vector<float> &w,
                        const std::vector<float> &bias,
                        const std::vector<int64_t> &label) {
  int classes = int(bias.size());
  double loss = 0;
  for (int bi = 0; bi < b; ++bi) {
    std::vector<double> z(static_cast<size_t>(classes));
    double zmax = -1e300, sum = 0;
    for (int c = 0; c < classes; ++c) {
      z[size_t(c)] = bias[size_t(c)];
      for (int i = 0; i < k; ++i)
        z[size_t(c)] += double(w[size_t(c * k + i)]) * f[size_t(bi * k + i)];
      zmax = std::max(zmax, z[size_t(c)]);
    }
    for (double v : z)
      sum += std::exp(v - zmax);
    loss += std::log(sum) + zmax - z[size_t(label[size_t(bi)])];
  }
  return loss / b;
}

bool writeLoss(const std::string &path, double loss) {
  std::ofstream out(path);
  char text[64];
  std::snprintf(text, sizeof text, "%.9g\n", loss);
  out << text;
  return bool(out);
}

const std::vector<int64_t> kLabels = {0, 1, 2, 1};

bool batch(const std::string &dir, const std::string &name,
           const std::vector<int64_t> &shape, double phase) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= size_t(d);
  auto x = values(n, phase, 1.0);
  return writeNpy(dir + "/" + name + "_x.npy", "<f4", shape, x.data(),
                  x.size() * 4) &&
         writeNpy(dir + "/" + name + "_label.npy", "<i8", {shape[0]},
                  kLabels.data(), size_t(shape[0]) * 8);
}

bool lstm(const std::string &dir) {
  Builder m("lstm", 17);
  auto w = values(96, 0.1, 0.5), r = values(128, 0.2, 0.5),
       bias = values(64, 0.3, 0.2), fcW = values(24, 0.4, 0.5),
       fcB = values(3, 0.5, 0.1);
  m.input("x", TensorProto::FLOAT, {"N", "6", "3"});
  m.init("lstm.W", {2, 16, 3}, w);
  m.init("lstm.R", {2, 16, 4}, r);
  m.init("lstm.B", {2, 32}, bias);
  m.init("fc.weight", {3, 8}, fcW);
  m.init("fc.bias", {3}, fcB);
  Builder::intsAttr(m.node("Transpose", "/Transpose", {"x"}, {"xt"}), "perm",
                    {1, 0, 2});
  auto *l = m.node("LSTM", "/lstm/LSTM", {"xt", "lstm.W", "lstm.R", "lstm.B"},
                   {"", "hn"});
  Builder::intAttr(l, "hidden_size", 4);
  stringAttr(l, "direction", "bidirectional");
  Builder::intsAttr(m.node("Transpose", "/Transpose_1", {"hn"}, {"hb"}),
                    "perm", {1, 0, 2});
  m.node("Flatten", "/Flatten", {"hb"}, {"f"});
  Builder::intAttr(
      m.node("Gemm", "/fc/Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}),
      "transB", 1);
  m.output("logits");
  // The loss of the batch: x [4, 6, 3] batch-first, so time-major xt[t][b]
  // = x[b][t]; the features are [h_forward, h_backward] of each sample.
  const int t = 6, b = 4, in = 3, h = 4;
  auto x = values(size_t(b * t * in), 0.9, 1.0), xt = x;
  for (int bi = 0; bi < b; ++bi)
    for (int ti = 0; ti < t; ++ti)
      for (int i = 0; i < in; ++i)
        xt[size_t((ti * b + bi) * in + i)] = x[size_t((bi * t + ti) * in + i)];
  std::vector<double> zeros(size_t(b * h), 0.0), f(size_t(b * 2 * h));
  for (int d = 0; d < 2; ++d) {
    auto ys = reference(true, xt, t, b, in, h, w.data() + d * 48,
                        r.data() + d * 64, bias.data() + d * 32, zeros,
                        /*reverse=*/d == 1);
    int last = d == 0 ? t - 1 : 0;
    for (int bi = 0; bi < b; ++bi)
      for (int j = 0; j < h; ++j)
        f[size_t(bi * 2 * h + d * h + j)] = ys[size_t((last * b + bi) * h + j)];
  }
  return m.write(dir + "/lstm.onnx") && batch(dir, "lstm", {4, 6, 3}, 0.9) &&
         writeLoss(dir + "/lstm_loss.txt",
                   meanCrossEntropy(f, b, 2 * h, fcW, fcB, kLabels));
}

bool gru(const std::string &dir) {
  Builder m("gru", 17);
  auto w = values(36, 0.1, 0.5), r = values(48, 0.2, 0.5),
       bias = values(24, 0.3, 0.2), h0 = values(4, 0.6, 0.3),
       fcW = values(60, 0.4, 0.3), fcB = values(3, 0.5, 0.1);
  m.input("x", TensorProto::FLOAT, {"4", "5", "3"});
  m.init("gru.W", {1, 12, 3}, w);
  m.init("gru.R", {1, 12, 4}, r);
  m.init("gru.B", {1, 24}, bias);
  m.init("gru.h0", {1, 1, 4}, h0);
  m.initInts("h0_shape", {4, 1, 4});
  m.init("fc.weight", {3, 20}, fcW);
  m.init("fc.bias", {3}, fcB);
  m.initInts("flat", {4, 20});
  // One learned initial state for every sample (the loader shuffles the
  // batch's rows), expanded to the batch.
  m.node("Expand", "/Expand", {"gru.h0", "h0_shape"}, {"h0"});
  auto *g = m.node("GRU", "/gru/GRU",
                   {"x", "gru.W", "gru.R", "gru.B", "", "h0"}, {"y"});
  Builder::intAttr(g, "hidden_size", 4);
  Builder::intAttr(g, "layout", 1);
  Builder::intAttr(g, "linear_before_reset", 1);
  m.node("Reshape", "/Reshape", {"y", "flat"}, {"f"});
  Builder::intAttr(
      m.node("Gemm", "/fc/Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}),
      "transB", 1);
  m.output("logits");
  // layout 1: x [B, T, I], initial_h [B, 1, H], Y [B, T, 1, H], flattened
  // to [B, T H].
  const int t = 5, b = 4, in = 3, h = 4;
  auto x = values(size_t(b * t * in), 1.3, 1.0), xt = x;
  for (int bi = 0; bi < b; ++bi)
    for (int ti = 0; ti < t; ++ti)
      for (int i = 0; i < in; ++i)
        xt[size_t((ti * b + bi) * in + i)] = x[size_t((bi * t + ti) * in + i)];
  std::vector<double> hs(size_t(b * h)), f(size_t(b * t * h));
  for (size_t k = 0; k < hs.size(); ++k)
    hs[k] = h0[k % size_t(h)];
  auto ys = reference(false, xt, t, b, in, h, w.data(), r.data(), bias.data(),
                      hs, /*reverse=*/false);
  for (int bi = 0; bi < b; ++bi)
    for (int ti = 0; ti < t; ++ti)
      for (int j = 0; j < h; ++j)
        f[size_t((bi * t + ti) * h + j)] = ys[size_t((ti * b + bi) * h + j)];
  return m.write(dir + "/gru.onnx") && batch(dir, "gru", {4, 5, 3}, 1.3) &&
         writeLoss(dir + "/gru_loss.txt",
                   meanCrossEntropy(f, b, t * h, fcW, fcB, kLabels));
}

bool rnnMix(const std::string &dir) {
  Builder m("rnn_mix", 17);
  m.input("x", TensorProto::FLOAT, {"4", "2", "3"});
  m.init("lstm.W", {1, 12, 3}, values(36, 0.1, 0.6));
  m.init("lstm.R", {1, 12, 3}, values(36, 0.2, 0.6));
  m.init("lstm.B", {1, 24}, values(24, 0.3, 0.2));
  m.init("lstm.P", {1, 9}, values(9, 0.7, 0.4));
  m.init("lstm.h0", {1, 2, 3}, values(6, 0.8, 0.3));
  m.init("lstm.c0", {1, 2, 3}, values(6, 0.9, 0.3));
  m.init("rnn.W", {1, 3, 3}, values(9, 1.0, 0.6));
  m.init("rnn.R", {1, 3, 3}, values(9, 1.1, 0.6));
  m.init("rnn.B", {1, 6}, values(6, 1.2, 0.3));
  m.init("gru.W", {1, 9, 3}, values(27, 1.3, 0.6));
  m.init("gru.R", {1, 9, 3}, values(27, 1.4, 0.6));
  m.init("gru.B", {1, 18}, values(18, 1.5, 0.2));
  m.initInts("seq", {4, 2, 3});
  m.initInts("out", {2, 3});
  auto *l = m.node("LSTM", "/lstm/LSTM",
                   {"x", "lstm.W", "lstm.R", "lstm.B", "", "lstm.h0",
                    "lstm.c0", "lstm.P"},
                   {"ly"});
  Builder::intAttr(l, "hidden_size", 3);
  floatAttr(l, "clip", 5.0f);
  m.node("Reshape", "/Reshape", {"ly", "seq"}, {"l"});
  auto *r = m.node("RNN", "/rnn/RNN", {"l", "rnn.W", "rnn.R", "rnn.B"},
                   {"ry"});
  Builder::intAttr(r, "hidden_size", 3);
  stringAttr(r, "direction", "reverse");
  stringsAttr(r, "activations", {"Relu"});
  m.node("Reshape", "/Reshape_1", {"ry", "seq"}, {"rr"});
  auto *g = m.node("GRU", "/gru/GRU", {"rr", "gru.W", "gru.R", "gru.B"},
                   {"", "gh"});
  Builder::intAttr(g, "hidden_size", 3);
  m.node("Reshape", "/Reshape_2", {"gh", "out"}, {"logits"});
  m.output("logits");
  return m.write(dir + "/rnn_mix.onnx");
}

} // namespace

bool writeRecurrentModels(const std::string &dir) {
  return lstm(dir) && gru(dir) && rnnMix(dir);
}

} // namespace ampc::onnxgen
