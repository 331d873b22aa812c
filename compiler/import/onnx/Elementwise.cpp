//===- Elementwise.cpp - Arithmetic, activations, Cast, Dropout
//-------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace ampc::onnx {
namespace {

// Integer arithmetic on values known at import time (shape chains):
// equal shapes or one scalar operand.
LogicalResult foldIntBinary(ImportState &s, const Tensor &a, const Tensor &b,
                            int64_t (*f)(int64_t, int64_t)) {
  bool aScalar = a.numel() == 1, bScalar = b.numel() == 1;
  if (a.shape != b.shape && !aScalar && !bScalar)
    return s.error("integer arithmetic on constants of different shapes is "
                   "not supported");
  Tensor r = aScalar && !bScalar ? b : a;
  r.name.clear();
  r.type = a.type;
  for (int64_t k = 0; k < r.numel(); ++k)
    r.i[k] = f(a.i[aScalar ? 0 : k], b.i[bScalar ? 0 : k]);
  s.setConst(s.node->outputs[0], std::move(r));
  return success();
}

LogicalResult binary(ImportState &s, StringRef op,
                     int64_t (*intFn)(int64_t, int64_t)) {
  if (failed(s.onlyAttrs({})))
    return failure();
  const Tensor *ca = s.constInput(0), *cb = s.constInput(1);
  if (ca && cb && !isFloatType(ca->type) && !isFloatType(cb->type))
    return foldIntBinary(s, *ca, *cb, intFn);
  FailureOr<Value> a = s.input(0), b = s.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (!isa<FloatType>(elementTypeOf(*a)) || !isa<FloatType>(elementTypeOf(*b)))
    return s.error("integer arithmetic on graph values is not supported "
                   "(only on values known at import time)");
  FailureOr<Value> r = s.emit(("graph." + op).str(), {*a, *b});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Mod of integers known at import time: shape arithmetic, such as the
// TorchScript exporter's (dim + rank) % rank for torch.unflatten (every
// nn.MultiheadAttention). fmod = 0: the sign of the divisor (Python's %);
// 1: the sign of the dividend (C's fmod).
LogicalResult mod(ImportState &s) {
  if (failed(s.onlyAttrs({"fmod"})))
    return failure();
  const Tensor *ca = s.constInput(0), *cb = s.constInput(1);
  if (!ca || !cb || isFloatType(ca->type) || isFloatType(cb->type))
    return s.error("Mod is supported on integers known at import time only "
                   "(shape arithmetic)");
  if (llvm::is_contained(cb->i, int64_t(0)))
    return s.error("Mod by zero");
  // x % -1 is 0; computed, INT64_MIN % -1 traps (x86's idiv).
  if (s.intAttr("fmod", 0) != 0)
    return foldIntBinary(s, *ca, *cb, [](int64_t a, int64_t b) {
      return b == -1 ? int64_t(0) : a % b;
    });
  return foldIntBinary(s, *ca, *cb, [](int64_t a, int64_t b) {
    int64_t r = b == -1 ? 0 : a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  });
}

LogicalResult unary(ImportState &s, StringRef op) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = s.emit(("graph." + op).str(), {*x});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// A float scalar constant of |like|'s element type.
Value scalarLike(ImportState &s, Value like, double v) {
  auto type = RankedTensorType::get({}, elementTypeOf(like));
  auto value =
      DenseElementsAttr::get(type, FloatAttr::get(elementTypeOf(like), v));
  OperationState st(s.loc(), "graph.constant");
  st.addAttribute("value", value);
  st.addTypes(type);
  return s.b.create(st)->getResult(0);
}

LogicalResult reciprocal(ImportState &s) {
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = s.emit("graph.div", {scalarLike(s, *x, 1.0), *x});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult pow(ImportState &s) {
  const Tensor *e = s.constInput(1);
  if (!e || e->numel() != 1)
    return s.error("the exponent must be a scalar known at import time");
  double exponent = isFloatType(e->type) ? e->f[0] : double(e->i[0]);
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = s.emit(
      "graph.pow", {*x}, {s.attr("exponent", s.b.getF64FloatAttr(exponent))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult leakyRelu(ImportState &s) {
  if (failed(s.onlyAttrs({"alpha"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      s.emit("graph.leaky_relu", {*x},
             {s.attr("negative_slope",
                     s.b.getF64FloatAttr(s.floatAttr("alpha", 0.01)))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Clip (min and max as attributes up to opset 10, then optional inputs
// known at import time) -> clamp.
LogicalResult clip(ImportState &s) {
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  SmallVector<NamedAttribute> attrs;
  const char *names[2] = {"min", "max"};
  for (unsigned k = 0; k < 2; ++k) {
    std::optional<double> bound;
    if (const Attribute *a = s.node->attr(names[k]);
        a && a->kind == Attribute::Float)
      bound = a->f;
    if (s.hasInput(1 + k)) {
      const Tensor *c = s.constInput(1 + k);
      if (!c || c->numel() != 1)
        return s.error(std::string(names[k]) +
                       " must be a scalar known at import time");
      bound = isFloatType(c->type) ? c->f[0] : double(c->i[0]);
    }
    if (bound)
      attrs.push_back(s.attr(names[k], s.b.getF64FloatAttr(*bound)));
  }
  if (attrs.empty()) {
    s.result(0, *x);
    return success();
  }
  FailureOr<Value> r = s.emit("graph.clamp", {*x}, attrs);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult softplus(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  // ONNX's Softplus is log(1 + exp(x)) everywhere: no linear threshold.
  FailureOr<Value> r =
      s.emit("graph.softplus", {*x},
             {s.attr("threshold", s.b.getF64FloatAttr(1e300))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// The inputs folded pairwise with the binary graph op |op|, in order.
FailureOr<Value> foldInputs(ImportState &s, StringRef op) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> acc = s.input(0);
  for (unsigned i = 1; succeeded(acc) && i < s.node->inputs.size(); ++i) {
    FailureOr<Value> v = s.input(i);
    acc = failed(v) ? v : s.emit(("graph." + op).str(), {*acc, *v});
  }
  return acc;
}

// Max, Min and Sum of any number of inputs.
LogicalResult variadic(ImportState &s, StringRef op) {
  FailureOr<Value> acc = foldInputs(s, op);
  if (failed(acc))
    return failure();
  s.result(0, *acc);
  return success();
}

// ONNX's HardSigmoid, max(0, min(1, alpha * x + beta)), as graph ops
// (PyTorch's hardsigmoid has no autocast entry either: the input's type).
FailureOr<Value> hardSigmoidOf(ImportState &s, Value x, double alpha,
                               double beta) {
  FailureOr<Value> ax = s.emit("graph.mul", {x, scalarLike(s, x, alpha)});
  if (failed(ax))
    return failure();
  FailureOr<Value> axb = s.emit("graph.add", {*ax, scalarLike(s, x, beta)});
  if (failed(axb))
    return failure();
  return s.emit("graph.clamp", {*axb},
                {s.attr("min", s.b.getF64FloatAttr(0.0)),
                 s.attr("max", s.b.getF64FloatAttr(1.0))});
}

// PyTorch's hardsigmoid, min(max(x + 3, 0), 6) / 6, times x first for its
// hardswish (x * min(max(x + 3, 0), 6) / 6): the float operations of its
// kernels, so the values are its bits (ONNX's alpha * x + beta with alpha
// the float 1/6 differs in the last bits, and more in half). The
// gradients are the composition's: at exactly x = -3 and 3 they take the
// clamp's inclusive bounds where PyTorch's kernels do not.
FailureOr<Value> hardFormula(ImportState &s, Value x, bool swish) {
  FailureOr<Value> r = s.emit("graph.add", {x, scalarLike(s, x, 3.0)});
  if (failed(r) ||
      failed(r = s.emit("graph.clamp", {*r},
                        {s.attr("min", s.b.getF64FloatAttr(0.0)),
                         s.attr("max", s.b.getF64FloatAttr(6.0))})) ||
      (swish && failed(r = s.emit("graph.mul", {x, *r}))))
    return failure();
  return s.emit("graph.div", {*r, scalarLike(s, x, 6.0)});
}

// HardSigmoid: PyTorch's formula for the attributes torch.onnx writes
// (alpha the float 1/6, beta 0.5), else ONNX's.
LogicalResult hardSigmoid(ImportState &s) {
  if (failed(s.onlyAttrs({"alpha", "beta"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  double alpha = s.floatAttr("alpha", 0.2), beta = s.floatAttr("beta", 0.5);
  FailureOr<Value> r = float(alpha) == float(1.0 / 6.0) && beta == 0.5
                           ? hardFormula(s, *x, /*swish=*/false)
                           : hardSigmoidOf(s, *x, alpha, beta);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// HardSwish (nn.Hardswish, opset 14).
LogicalResult hardSwish(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = hardFormula(s, *x, /*swish=*/true);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// PRelu(x, slope) = x where x > 0, slope * x elsewhere, written
// relu(x) + slope * clamp(x, max = 0): the same values and PyTorch's
// gradients, x == 0 included (relu's is 0 there and the clamp's, whose
// bound is inclusive, 1: dx = slope; dslope = x where x < 0, else 0). The
// slope is usually a parameter ([C, 1, 1] for NCHW; [1] for nn.PReLU()) and
// broadcasts to x one way, as ONNX's.
LogicalResult prelu(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> x = s.input(0);
  FailureOr<Value> slope = failed(x) ? x : s.input(1);
  if (failed(slope))
    return failure();
  FailureOr<Value> pos = s.emit("graph.relu", {*x});
  FailureOr<Value> neg =
      failed(pos) ? pos
                  : s.emit("graph.clamp", {*x},
                           {s.attr("max", s.b.getF64FloatAttr(0.0))});
  if (failed(neg) || failed(neg = s.emit("graph.mul", {*slope, *neg})))
    return failure();
  if (shapeOf(*neg) != shapeOf(*x))
    return s.error("the slope " + shapeString(shapeOf(*slope)) +
                   " does not broadcast to the input " +
                   shapeString(shapeOf(*x)));
  FailureOr<Value> r = s.emit("graph.add", {*pos, *neg});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Elu, Selu and Celu are graph.elu (aten's elu: alpha, scale, input_scale).
LogicalResult eluFamily(ImportState &s, StringRef op) {
  bool selu = op == "Selu";
  if (failed(selu ? s.onlyAttrs({"alpha", "gamma"}) : s.onlyAttrs({"alpha"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  // ONNX's Selu defaults are its float32 spellings of SELU's constants.
  double alpha = s.floatAttr("alpha", selu ? 1.67326319217681884765625 : 1.0);
  SmallVector<NamedAttribute> attrs = {
      s.attr("alpha", s.b.getF64FloatAttr(alpha))};
  if (selu)
    attrs.push_back(s.attr(
        "scale",
        s.b.getF64FloatAttr(s.floatAttr("gamma", 1.05070102214813232421875))));
  if (op == "Celu") {
    if (alpha == 0.0)
      return s.error("alpha must be nonzero");
    attrs.push_back(s.attr("input_scale", s.b.getF64FloatAttr(1.0 / alpha)));
  }
  FailureOr<Value> r = s.emit("graph.elu", {*x}, attrs);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Softsign: x / (1 + |x|), as F.softsign computes it.
LogicalResult softsign(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> d = s.emit("graph.abs", {*x});
  if (failed(d) ||
      failed(d = s.emit("graph.add", {scalarLike(s, *x, 1.0), *d})))
    return failure();
  FailureOr<Value> r = s.emit("graph.div", {*x, *d});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Mean of any number of inputs: their sum, divided by the count.
LogicalResult mean(ImportState &s) {
  FailureOr<Value> sum = foldInputs(s, "add");
  if (failed(sum))
    return failure();
  FailureOr<Value> r = s.emit(
      "graph.div", {*sum, scalarLike(s, *sum, double(s.node->inputs.size()))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Where(condition, x, y): the condition is an integer (or BOOL, imported
// as i64) tensor.
LogicalResult where(ImportState &s) {
  FailureOr<Value> c = s.input(0), x = s.input(1), y = s.input(2);
  if (failed(c) || failed(x) || failed(y))
    return failure();
  if (!isa<IntegerType>(elementTypeOf(*c)))
    return s.error("the condition must be a BOOL or integer tensor");
  FailureOr<Value> r = s.emit("graph.where", {*c, *x, *y});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult gelu(ImportState &s) {
  if (failed(s.onlyAttrs({"approximate"})))
    return failure();
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  std::string approx = s.stringAttr("approximate", "none");
  FailureOr<Value> r = s.emit(
      "graph.gelu", {*x}, {s.attr("approximate", s.b.getStringAttr(approx))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Outputs equal to the input (Identity; Dropout outside training mode).
LogicalResult forward(ImportState &s) {
  const std::string &in = s.node->inputs.at(0);
  if (const Tensor *c = s.constant(in)) {
    s.setConst(s.node->outputs[0], *c);
    return success();
  }
  FailureOr<Value> x = s.get(in);
  if (failed(x))
    return failure();
  s.result(0, *x);
  return success();
}

LogicalResult dropout(ImportState &s) {
  // PyTorch's TorchScript exporter names the mask output of a train-mode
  // Dropout even though nothing reads it (every nn.TransformerEncoderLayer).
  if (s.node->outputs.size() > 1 && !s.node->outputs[1].empty() &&
      s.usesOf(s.node->outputs[1]) > 0)
    return s.error("the mask output is read, which is not supported");
  double ratio = s.floatAttr("ratio", 0.5);
  if (const Tensor *r = s.constInput(1)) {
    if (r->numel() != 1)
      return s.error("the ratio must be a scalar");
    ratio = isFloatType(r->type) ? r->f[0] : double(r->i[0]);
  } else if (s.hasInput(1)) {
    return s.error("the ratio must be known at import time");
  }
  bool training = false;
  if (const Tensor *t = s.constInput(2)) {
    if (t->numel() != 1 || isFloatType(t->type))
      return s.error("training_mode must be a boolean scalar");
    training = t->i[0] != 0;
  } else if (s.hasInput(2)) {
    return s.error("training_mode must be known at import time");
  }
  // ONNX's Dropout is the identity unless training_mode is true (an export
  // with torch.onnx.TrainingMode.TRAINING); that matches its node tests.
  if (!training || ratio == 0.0)
    return forward(s);
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      s.emit("graph.dropout", {*x},
             {s.attr("p", s.b.getF64FloatAttr(ratio)),
              s.attr("key", s.b.getI64IntegerAttr(s.nextDropoutKey++))});
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

// Cast's input 0 to the ONNX type |to|: a known tensor stays known, a
// graph value gets a graph.cast between float types.
LogicalResult castTo(ImportState &s, int64_t to) {
  if (const Tensor *c = s.constInput(0)) {
    Tensor r = *c;
    r.type = int32_t(to);
    if (isFloatType(c->type) && !isFloatType(to)) {
      r.f.clear();
      for (double d : c->f)
        r.i.push_back(int64_t(d));
    } else if (!isFloatType(c->type) && isFloatType(to)) {
      r.i.clear();
      for (int64_t i : c->i)
        r.f.push_back(double(i));
    }
    s.setConst(s.node->outputs[0], std::move(r));
    return success();
  }
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  FailureOr<Type> elem = s.elementType(int32_t(to));
  if (failed(elem))
    return s.error(std::string("cast to ") + dataTypeName(int32_t(to)) +
                   " is not supported");
  Type from = elementTypeOf(*x);
  if (from == *elem) {
    s.result(0, *x);
    return success();
  }
  if (!isa<FloatType>(from) || !isa<FloatType>(*elem))
    return s.error("casts between integer and float graph values are not "
                   "supported");
  auto type = RankedTensorType::get(shapeOf(*x), *elem);
  FailureOr<Value> r = s.emit("graph.cast", {*x}, {}, type);
  if (failed(r))
    return failure();
  s.result(0, *r);
  return success();
}

LogicalResult castOp(ImportState &s) {
  return castTo(s, s.intAttr("to", kUndefined));
}

// CastLike (opset 15; the dynamo exporter writes it for scalars meeting a
// tensor): a Cast to input 1's type.
LogicalResult castLike(ImportState &s) {
  if (failed(s.onlyAttrs({"saturate"})))
    return failure();
  if (!s.hasInput(1))
    return s.error("input 1 (target_type) is missing");
  int32_t to = s.onnxTypeOfInput(1);
  if (to == kUndefined)
    return s.error("the type of input 1 is not one ampc knows");
  return castTo(s, to);
}

} // namespace

void registerElementwiseOps(OpTable &t) {
  // Known integers wrap as two's complement (signed overflow would be
  // undefined behaviour here, and INT64_MIN / -1 traps): a hostile model's
  // constants give a value, which later checks (shapes, indices) judge.
  t["Add"] = [](ImportState &s) {
    return binary(s, "add", [](int64_t a, int64_t b) {
      return int64_t(uint64_t(a) + uint64_t(b));
    });
  };
  t["Sub"] = [](ImportState &s) {
    return binary(s, "sub", [](int64_t a, int64_t b) {
      return int64_t(uint64_t(a) - uint64_t(b));
    });
  };
  t["Mul"] = [](ImportState &s) {
    return binary(s, "mul", [](int64_t a, int64_t b) {
      return int64_t(uint64_t(a) * uint64_t(b));
    });
  };
  t["Div"] = [](ImportState &s) {
    return binary(s, "div", [](int64_t a, int64_t b) {
      return b == 0    ? int64_t(0)
             : b == -1 ? int64_t(0 - uint64_t(a))
                       : a / b;
    });
  };
  t["Mod"] = mod;
  for (const char *op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg",
                         "Erf", "Abs", "Sin", "Cos"}) {
    std::string name = StringRef(op).lower();
    t[op] = [name](ImportState &s) { return unary(s, name); };
  }
  t["Reciprocal"] = reciprocal;
  t["Clip"] = clip;
  t["Softplus"] = softplus;
  t["Max"] = [](ImportState &s) { return variadic(s, "maximum"); };
  t["Min"] = [](ImportState &s) { return variadic(s, "minimum"); };
  t["Sum"] = [](ImportState &s) { return variadic(s, "add"); };
  t["Mean"] = mean;
  t["HardSigmoid"] = hardSigmoid;
  t["HardSwish"] = hardSwish;
  t["PRelu"] = prelu;
  t["Softsign"] = softsign;
  for (const char *op : {"Elu", "Selu", "Celu"})
    t[op] = [op](ImportState &s) { return eluFamily(s, op); };
  t["Where"] = where;
  t["Pow"] = pow;
  t["Gelu"] = gelu;
  t["LeakyRelu"] = leakyRelu;
  t["Identity"] = forward;
  t["Dropout"] = dropout;
  t["Cast"] = castOp;
  t["CastLike"] = castLike;
}

} // namespace ampc::onnx
