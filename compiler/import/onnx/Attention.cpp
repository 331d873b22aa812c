//===- Attention.cpp - Exported attention -> scaled_dot_product_attention -===//
//
// PyTorch's exporters write F.scaled_dot_product_attention (and the
// hand-written softmax(q k^T / sqrt(d) + mask) v of GPT code) as
//
//   MatMul(Softmax(Add(MatMul(Mul(q, s1), Mul(kT, s2)), mask)), v)
//
// or with the mask applied as masked_fill (Where(cond, -inf, scores)),
// with the scale either split over q and kT (TorchScript and dynamo
// exporters: sqrt(scale) on each), or applied to the scores (Div or Mul by
// a constant), and the mask optional. Imported node by node, that is five
// graph ops with an explicit [T, S] mask of -inf; one
// graph.scaled_dot_product_attention is what AMP, the kernels and the memory
// plan want. The match runs when the final MatMul is imported, so the
// scales and the mask (computed by Shape/Sqrt/Trilu/Where chains) have
// already been folded to constants (Fold.cpp); the ops the pattern's nodes
// produced are erased once nothing reads them.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace ampc::onnx {
namespace {

// A scalar known at import time (any shape with one element).
std::optional<double> scalarOf(const ImportState &s, const std::string &v) {
  const Tensor *t = s.constant(v);
  if (!t || t->numel() != 1)
    return std::nullopt;
  return isFloatType(t->type) ? t->f[0] : double(t->i[0]);
}

// For Mul(x, c) / Mul(c, x) with scalar constant c: sets |x|, returns c.
std::optional<double> scaledBy(const ImportState &s, const Node &n,
                               std::string &x) {
  if (n.opType != "Mul" || n.inputs.size() != 2)
    return std::nullopt;
  for (int k = 0; k < 2; ++k)
    if (auto c = scalarOf(s, n.inputs[k])) {
      x = n.inputs[1 - k];
      return c;
    }
  return std::nullopt;
}

enum class Mask { None, Causal, Other };

// Classifies an additive mask for [T, S] scores: all zeros, or 0 on and
// below the diagonal and -inf (or a huge negative, as the dynamo exporter's
// finfo.min) above it, the same for every leading index.
Mask classify(const Tensor &m, int64_t t, int64_t sLen) {
  if (!isFloatType(m.type) || m.shape.size() < 2 ||
      m.shape[m.shape.size() - 2] != t || m.shape.back() != sLen ||
      m.numel() != t * sLen)
    return Mask::Other;
  bool zeros = true, causal = t == sLen;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < sLen; ++j) {
      double v = m.f[i * sLen + j];
      zeros &= v == 0;
      causal &= j <= i ? v == 0 : v <= -1e30;
    }
  return zeros ? Mask::None : causal ? Mask::Causal : Mask::Other;
}

class Matcher {
public:
  explicit Matcher(ImportState &s) : s(s) {}

  // The node producing |v| when nothing but the pattern reads |v|.
  const Node *single(const std::string &v, const char *opType) {
    const Node *n = s.producerOf(v);
    if (!n || n->opType != opType || s.usesOf(v) != 1)
      return nullptr;
    inner.push_back(v);
    return n;
  }

  FailureOr<bool> run() {
    const Node &final = *s.node;
    if (final.inputs.size() != 2)
      return false;
    const Node *softmax = single(final.inputs[0], "Softmax");
    // Over the last axis of the 4-D scores (before opset 13 the default
    // axis is 1 and the input is flattened from it).
    if (!softmax)
      return false;
    const Attribute *axis = softmax->attr("axis");
    int64_t ax = axis ? axis->i : (s.opset < 13 ? 1 : -1);
    if (ax != -1 && ax != 3)
      return false;
    std::string scores = softmax->inputs.at(0);
    std::optional<Tensor> maskT;
    if (const Node *add = single(scores, "Add")) {
      for (int k = 0; k < 2 && !maskT; ++k)
        if (const Tensor *m = s.constant(add->inputs[k])) {
          maskT = *m;
          inner.push_back(add->inputs[k]);
          scores = add->inputs[1 - k];
        }
      if (!maskT)
        return false;
    } else if (const Node *where = single(scores, "Where")) {
      // masked_fill: Where(cond, -inf, scores) or Where(cond, scores, -inf).
      const Tensor *cond = s.constant(where->inputs.at(0));
      if (!cond || isFloatType(cond->type))
        return false;
      for (int k = 1; k < 3 && !maskT; ++k) {
        std::optional<double> fill = scalarOf(s, where->inputs[k]);
        if (!fill || *fill > -1e30 || s.constant(where->inputs[3 - k]))
          continue;
        Tensor m = *cond;
        m.type = kFloat;
        m.i.clear();
        for (int64_t c : cond->i)
          m.f.push_back((c != 0) == (k == 1) ? *fill : 0.0);
        maskT = std::move(m);
        inner.push_back(where->inputs[0]);
        inner.push_back(where->inputs[k]);
        scores = where->inputs[3 - k];
      }
      if (!maskT)
        return false;
    }
    double scale = 1.0;
    const Node *qk = s.producerOf(scores);
    if (qk && (qk->opType == "Div" || qk->opType == "Mul") &&
        s.usesOf(scores) == 1) {
      std::string x;
      std::optional<double> c;
      if (qk->opType == "Mul") {
        c = scaledBy(s, *qk, x);
      } else if ((c = scalarOf(s, qk->inputs.at(1)))) {
        x = qk->inputs[0];
        c = 1.0 / *c;
      }
      if (!c)
        return false;
      scale = *c;
      inner.push_back(scores);
      inner.push_back(qk->inputs[qk->inputs[0] == x ? 1 : 0]);
      scores = x;
    }
    qk = single(scores, "MatMul");
    if (!qk)
      return false;
    std::string q = qk->inputs.at(0), kT = qk->inputs.at(1), v = final.inputs[1];
    for (std::string *operand : {&q, &kT})
      if (const Node *mul = s.producerOf(*operand);
          mul && s.usesOf(*operand) == 1) {
        std::string x;
        if (auto c = scaledBy(s, *mul, x)) {
          inner.push_back(*operand);
          inner.push_back(mul->inputs[mul->inputs[0] == x ? 1 : 0]);
          scale *= *c;
          *operand = x;
        }
      }
    if (s.constant(q) || s.constant(kT) || s.constant(v) ||
        !s.has(q) || !s.has(kT) || !s.has(v))
      return false;
    FailureOr<Value> qv = s.get(q), kTv = s.get(kT), vv = s.get(v);
    if (failed(qv) || failed(kTv) || failed(vv))
      return failure();
    ArrayRef<int64_t> qs = shapeOf(*qv), ks = shapeOf(*kTv), vs = shapeOf(*vv);
    if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 ||
        qs.take_front(2) != ks.take_front(2) ||
        qs.take_front(2) != vs.take_front(2) || qs[3] != ks[2] ||
        ks[3] != vs[2] || !isa<FloatType>(elementTypeOf(*qv)))
      return false;
    Mask mask = Mask::None;
    if (maskT) {
      mask = classify(*maskT, qs[2], ks[3]);
      if (mask == Mask::Other)
        return false;
    }
    // k from kT: a Transpose only the pattern reads is composed with the
    // swap of the last two dimensions (nothing left when it was that swap);
    // otherwise kT is transposed back.
    Value kIn = *kTv;
    SmallVector<int64_t> perm = {0, 1, 3, 2};
    if (const Node *t = s.producerOf(kT);
        t && t->opType == "Transpose" && s.usesOf(kT) == 1) {
      auto p = t->attr("perm");
      FailureOr<Value> src = s.get(t->inputs.at(0));
      if (p && p->kind == Attribute::Ints && p->ints.size() == 4 &&
          succeeded(src)) {
        inner.push_back(kT);
        kIn = *src;
        perm = {p->ints[0], p->ints[1], p->ints[3], p->ints[2]};
      }
    }
    FailureOr<Value> k = kIn;
    if (perm != ArrayRef<int64_t>{0, 1, 2, 3})
      k = s.emit("graph.transpose", {kIn},
                 {s.attr("perm", s.b.getDenseI64ArrayAttr(perm))});
    if (failed(k))
      return failure();
    SmallVector<NamedAttribute> attrs;
    if (mask == Mask::Causal)
      attrs.push_back(s.attr("causal", s.b.getUnitAttr()));
    // The default 1/sqrt(D) is left implicit; the exported one is the same
    // number up to the float rounding of its two square roots.
    if (std::abs(scale * std::sqrt(double(qs[3])) - 1.0) > 1e-6)
      attrs.push_back(s.attr("scale", s.b.getF64FloatAttr(scale)));
    FailureOr<Value> r = s.emit("graph.scaled_dot_product_attention",
                                {*qv, *k, *vv}, attrs);
    if (failed(r))
      return failure();
    s.result(0, *r);
    s.eraseUnused(inner);
    return true;
  }

private:
  ImportState &s;
  std::vector<std::string> inner; // values only the pattern read
};

} // namespace

FailureOr<bool> importAttention(ImportState &s) {
  if (s.node->opType != "MatMul")
    return false;
  return Matcher(s).run();
}

} // namespace ampc::onnx
