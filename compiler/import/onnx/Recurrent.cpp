//===- Recurrent.cpp - LSTM, GRU and RNN unrolled over the sequence -------===//
//
// The sequence length is the input's static first (or, layout 1, second)
// dimension, so each recurrent node becomes the graph ops of every step:
// one graph.linear projects the inputs of all steps (X W^T plus the
// biases), then each step adds its graph.linear of the previous hidden
// state and applies the gates. Autodiff through these ops is
// backpropagation through time, and the fusion passes join each step's
// elementwise ops. The cells are PyTorch's (nn.LSTM, nn.GRU, nn.RNN, which
// torch.onnx exports as these nodes): the same gate formulas, GRU's update
// as n + z * (h - n), its reset gate applied after the recurrent product
// when linear_before_reset is set (PyTorch's cell; ONNX's default applies
// it before).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

enum class Cell { Rnn, Gru, Lstm };

constexpr int64_t kMaxUnrolledSteps = 4096;

// What one node asks for, checked against its inputs' shapes.
struct Spec {
  Cell cell;
  int64_t gates = 1;    // row blocks of W and R: 1, 3 (z r h) or 4 (i o f c)
  int64_t hidden = 0;   // H
  int64_t dirs = 1;     // 2 when bidirectional
  bool reverse = false; // direction "reverse" (one direction, backwards)
  bool batchFirst = false;     // layout 1: X [B, T, I], Y [B, T, D, H]
  double clip = 0;             // bound on every gate's input; 0 for none
  bool linearBeforeReset = false;
  std::vector<std::string> acts; // per direction, the cell's count each
  int64_t steps = 0, batch = 0;
};

// f, g (and h): how many activations one direction of a cell takes.
size_t actsPerDir(Cell c) {
  return c == Cell::Lstm ? 3 : c == Cell::Gru ? 2 : 1;
}

// |act| of |x|, clipped first unless |clip| is false (LSTM's h(c'), which
// onnxruntime does not clip).
FailureOr<Value> activate(ImportState &s, const Spec &spec, StringRef act,
                          Value x, bool clip = true) {
  if (clip && spec.clip > 0) {
    FailureOr<Value> c = s.emit(
        "graph.clamp", {x},
        {s.attr("min", s.b.getF64FloatAttr(-spec.clip)),
         s.attr("max", s.b.getF64FloatAttr(spec.clip))});
    if (failed(c))
      return failure();
    x = *c;
  }
  if (act.equals_insensitive("sigmoid"))
    return s.emit("graph.sigmoid", {x});
  if (act.equals_insensitive("tanh"))
    return s.emit("graph.tanh", {x});
  return s.emit("graph.relu", {x}); // "Relu", checked in parse
}

FailureOr<Value> add(ImportState &s, Value a, Value b) {
  return s.emit("graph.add", {a, b});
}
FailureOr<Value> mul(ImportState &s, Value a, Value b) {
  return s.emit("graph.mul", {a, b});
}

LogicalResult expectShape(ImportState &s, StringRef what,
                          ArrayRef<int64_t> got, ArrayRef<int64_t> want) {
  if (got == want)
    return success();
  return s.error(what + " is " + shapeString(got) + "; " + shapeString(want) +
                 " expected");
}

// Reads and checks the attributes and the shapes of X, W and R.
FailureOr<Spec> parse(ImportState &s, Cell cell) {
  Spec spec;
  spec.cell = cell;
  spec.gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  std::initializer_list<StringRef> common = {
      "activation_alpha", "activation_beta", "activations", "clip",
      "direction",        "hidden_size",     "layout"};
  SmallVector<StringRef> known(common);
  if (cell == Cell::Lstm)
    known.push_back("input_forget");
  if (cell == Cell::Gru)
    known.push_back("linear_before_reset");
  const Node &n = *s.node;
  size_t maxInputs = cell == Cell::Lstm ? 8 : 6;
  if (n.inputs.size() > maxInputs)
    return (void)s.error("has " + std::to_string(n.inputs.size()) +
                         " inputs; " + n.opType + " takes at most " +
                         std::to_string(maxInputs)),
           failure();
  for (const Attribute &a : n.attrs)
    if (!llvm::is_contained(known, StringRef(a.name)))
      return (void)s.error("attribute '" + a.name + "' is not supported"),
             failure();
  if (const Attribute *a = n.attr("activations");
      a && a->kind != Attribute::Strings)
    return (void)s.error("attribute 'activations' must be strings"),
           failure();
  for (const char *name : {"activation_alpha", "activation_beta"})
    if (const Attribute *a = n.attr(name))
      return (void)s.error(Twine(name) +
                           " is not supported (only Sigmoid, Tanh and Relu "
                           "activations are imported)"),
             failure();
  if (s.intAttr("input_forget", 0) != 0)
    return (void)s.error("input_forget=1 (coupled input and forget gates) "
                         "is not supported"),
           failure();
  spec.linearBeforeReset = s.intAttr("linear_before_reset", 0) != 0;
  spec.clip = s.floatAttr("clip", 0.0);
  if (n.attr("clip") && !(spec.clip > 0))
    return (void)s.error("clip must be positive"), failure();
  int64_t layout = s.intAttr("layout", 0);
  if (layout != 0 && layout != 1)
    return (void)s.error("layout must be 0 or 1"), failure();
  spec.batchFirst = layout == 1;
  std::string dir = s.stringAttr("direction", "forward");
  if (dir == "bidirectional")
    spec.dirs = 2;
  else if (dir == "reverse")
    spec.reverse = true;
  else if (dir != "forward")
    return (void)s.error("direction '" + dir +
                         "' is not forward, reverse or bidirectional"),
           failure();

  const Attribute *acts = n.attr("activations");
  size_t per = actsPerDir(cell);
  std::vector<std::string> dflt = cell == Cell::Lstm
                                      ? std::vector<std::string>{"Sigmoid",
                                                                 "Tanh", "Tanh"}
                                  : cell == Cell::Gru
                                      ? std::vector<std::string>{"Sigmoid",
                                                                 "Tanh"}
                                      : std::vector<std::string>{"Tanh"};
  std::vector<std::string> list =
      acts && !acts->strings.empty() ? acts->strings : dflt;
  if (list.size() == per && spec.dirs == 2) {
    std::vector<std::string> forward = list; // both directions the same
    list.insert(list.end(), forward.begin(), forward.end());
  }
  if (list.size() != per * size_t(spec.dirs))
    return (void)s.error("activations has " + std::to_string(list.size()) +
                         " entries; " + std::to_string(per * spec.dirs) +
                         " expected"),
           failure();
  for (const std::string &a : list)
    if (!StringRef(a).equals_insensitive("sigmoid") &&
        !StringRef(a).equals_insensitive("tanh") &&
        !StringRef(a).equals_insensitive("relu"))
      return (void)s.error("activation '" + a +
                           "' is not supported (Sigmoid, Tanh and Relu are)"),
             failure();
  spec.acts = list;
  if (!s.attrKindError.empty())
    return (void)s.error(s.attrKindError), failure();

  FailureOr<Value> x = s.input(0), w = s.input(1), r = s.input(2);
  if (failed(x) || failed(w) || failed(r))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x), ws = shapeOf(*w), rs = shapeOf(*r);
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3)
    return (void)s.error("X, W and R must be 3-D"), failure();
  for (ArrayRef<int64_t> sh : {xs, ws, rs})
    if (llvm::any_of(sh, [](int64_t d) { return d < 0; }))
      return (void)s.error("X, W and R need static shapes (give --batch)"),
             failure();
  spec.steps = xs[spec.batchFirst ? 1 : 0];
  spec.batch = xs[spec.batchFirst ? 0 : 1];
  spec.hidden = s.intAttr("hidden_size", rs[2]);
  int64_t h = spec.hidden, g = spec.gates;
  if (h <= 0 || spec.steps <= 0)
    return (void)s.error("hidden_size and the sequence length must be "
                         "positive"),
           failure();
  if (failed(expectShape(s, "W", ws, {spec.dirs, g * h, xs[2]})) ||
      failed(expectShape(s, "R", rs, {spec.dirs, g * h, h})))
    return failure();
  return spec;
}

// Every direction's tensors, sliced out of the node's inputs once.
struct Direction {
  Value w, r;          // [G H, I], [G H, H]
  Value inBias;        // [G H] added to the input projection, or null
  Value recBias;       // [G H] added to the recurrent product, or null
  Value peephole;      // LSTM's P [3 H] (i, o, f), or null
  Value h0, c0;        // [B, H] initial states, or null for zeros
  std::vector<Value> ys; // the hidden state of each step, in time order
  Value hLast, cLast;
};

// Direction |d|'s part of |v|: its slice d of |axis| (0 for W, R, B, P
// [D, ...]; 1 for batch-first states [B, D, H]) reshaped to |shape|.
FailureOr<Value> perDirection(ImportState &s, Value v, int64_t d,
                              int64_t axis, ArrayRef<int64_t> shape) {
  FailureOr<Value> r = sliceAxis(s, v, axis, d, d + 1);
  if (failed(r))
    return failure();
  return reshapeTo(s, *r, shape);
}

// A state input that is a known all-zero tensor (PyTorch's default h0/c0,
// exported as a zeros constant) is no initial state: the first step then
// skips its recurrent product.
bool knownZeros(ImportState &s, unsigned i) {
  const Tensor *t = s.constInput(i);
  return t && llvm::all_of(t->f, [](double v) { return v == 0.0; }) &&
         t->i.empty();
}

FailureOr<Value> stateInput(ImportState &s, const Spec &spec, unsigned i,
                            int64_t d, StringRef what) {
  if (!s.hasInput(i))
    return Value();
  SmallVector<int64_t> expect =
      spec.batchFirst ? SmallVector<int64_t>{spec.batch, spec.dirs, spec.hidden}
                      : SmallVector<int64_t>{spec.dirs, spec.batch, spec.hidden};
  if (const Tensor *t = s.constInput(i)) {
    if (failed(expectShape(s, what, t->shape, expect)))
      return failure();
    if (knownZeros(s, i))
      return Value();
  }
  FailureOr<Value> v = s.input(i);
  if (failed(v))
    return failure();
  if (failed(expectShape(s, what, shapeOf(*v), expect)))
    return failure();
  return perDirection(s, *v, d, spec.batchFirst ? 1 : 0,
                      {spec.batch, spec.hidden});
}

// Slices direction |d|'s weights, biases and initial states.
FailureOr<Direction> direction(ImportState &s, const Spec &spec, int64_t d) {
  Direction dir;
  int64_t h = spec.hidden, gh = spec.gates * h;
  FailureOr<Value> w = s.input(1), r = s.input(2);
  if (failed(w) || failed(r))
    return failure();
  int64_t in = shapeOf(*w)[2];
  FailureOr<Value> wd = perDirection(s, *w, d, 0, {gh, in});
  FailureOr<Value> rd = perDirection(s, *r, d, 0, {gh, h});
  if (failed(wd) || failed(rd))
    return failure();
  dir.w = *wd;
  dir.r = *rd;
  if (s.hasInput(3)) {
    FailureOr<Value> b = s.input(3);
    if (failed(b))
      return failure();
    if (failed(expectShape(s, "B", shapeOf(*b), {spec.dirs, 2 * gh})))
      return failure();
    FailureOr<Value> bd = perDirection(s, *b, d, 0, {2 * gh});
    FailureOr<Value> wb = failed(bd) ? bd : sliceAxis(s, *bd, 0, 0, gh);
    FailureOr<Value> rb = failed(wb) ? wb : sliceAxis(s, *bd, 0, gh, 2 * gh);
    if (failed(rb))
      return failure();
    // GRU with linear_before_reset keeps Rb in the recurrent product,
    // where the reset gate multiplies its h rows; elsewhere both biases
    // add to the input projection.
    if (spec.cell == Cell::Gru && spec.linearBeforeReset) {
      dir.inBias = *wb;
      dir.recBias = *rb;
    } else {
      FailureOr<Value> sum = add(s, *wb, *rb);
      if (failed(sum))
        return failure();
      dir.inBias = *sum;
    }
  }
  if (spec.cell == Cell::Lstm && s.hasInput(7)) {
    FailureOr<Value> p = s.input(7);
    if (failed(p))
      return failure();
    if (failed(expectShape(s, "P", shapeOf(*p), {spec.dirs, 3 * h})))
      return failure();
    FailureOr<Value> pd = perDirection(s, *p, d, 0, {3 * h});
    if (failed(pd))
      return failure();
    dir.peephole = *pd;
  }
  FailureOr<Value> h0 = stateInput(s, spec, 5, d, "initial_h");
  if (failed(h0))
    return failure();
  dir.h0 = *h0;
  if (spec.cell == Cell::Lstm) {
    FailureOr<Value> c0 = stateInput(s, spec, 6, d, "initial_c");
    if (failed(c0))
      return failure();
    dir.c0 = *c0;
  }
  return dir;
}

// Gate |k|'s columns k H .. (k + 1) H of a [B, G H] value (or of a [G H]
// bias).
FailureOr<Value> gate(ImportState &s, const Spec &spec, Value v, int64_t k) {
  return sliceAxis(s, v, int64_t(shapeOf(v).size()) - 1, k * spec.hidden,
                   (k + 1) * spec.hidden);
}

// x + p * c for LSTM's peephole |k| (i 0, o 1, f 2), or x.
FailureOr<Value> peep(ImportState &s, const Spec &spec, const Direction &dir,
                      Value x, int64_t k, Value c) {
  if (!dir.peephole || !c)
    return x;
  FailureOr<Value> p = sliceAxis(s, dir.peephole, 0, k * spec.hidden,
                                 (k + 1) * spec.hidden);
  FailureOr<Value> pc = failed(p) ? p : mul(s, *p, c);
  return failed(pc) ? pc : add(s, x, *pc);
}

// One step of direction |dir| (activations |acts|) on the input
// projection |xt| [B, G H]; updates dir.hLast (and dir.cLast).
LogicalResult step(ImportState &s, const Spec &spec, Direction &dir,
                   const std::string *acts, Value xt) {
  Value h = dir.hLast, c = dir.cLast;
  auto recurrent = [&](Value hv, Value weight,
                       Value bias) -> FailureOr<Value> {
    SmallVector<Value> ops = {hv, weight};
    if (bias)
      ops.push_back(bias);
    return s.emit("graph.linear", ops);
  };
  if (spec.cell == Cell::Gru) {
    int64_t hh = spec.hidden;
    FailureOr<Value> z, r, n;
    if (spec.linearBeforeReset) {
      // PyTorch's cell: n = g(x_n + r * (h R_n^T + Rb_n)).
      FailureOr<Value> hr = h ? recurrent(h, dir.r, dir.recBias)
                              : FailureOr<Value>(dir.recBias);
      if (failed(hr))
        return failure();
      FailureOr<Value> zr = *hr ? add(s, xt, *hr) : FailureOr<Value>(xt);
      FailureOr<Value> hn = *hr ? gate(s, spec, *hr, 2) : FailureOr<Value>();
      if (failed(zr) || (*hr && failed(hn)))
        return failure();
      z = gate(s, spec, *zr, 0);
      r = failed(z) ? z : gate(s, spec, *zr, 1);
      n = failed(r) ? r : gate(s, spec, xt, 2);
      if (failed(z) || failed(r) || failed(n) ||
          failed(z = activate(s, spec, acts[0], *z)) ||
          failed(r = activate(s, spec, acts[0], *r)))
        return failure();
      if (*hr) {
        FailureOr<Value> rn = mul(s, *r, *hn);
        if (failed(rn) || failed(n = add(s, *n, *rn)))
          return failure();
      }
    } else {
      // ONNX's default: n = g(x_n + (r * h) R_n^T), both biases in x_n.
      FailureOr<Value> zr = sliceAxis(s, xt, 1, 0, 2 * hh);
      n = failed(zr) ? zr : gate(s, spec, xt, 2);
      if (failed(n))
        return failure();
      if (h) {
        FailureOr<Value> rzr = sliceAxis(s, dir.r, 0, 0, 2 * hh);
        FailureOr<Value> hzr = failed(rzr) ? rzr : recurrent(h, *rzr, {});
        if (failed(hzr) || failed(zr = add(s, *zr, *hzr)))
          return failure();
      }
      z = gate(s, spec, *zr, 0);
      r = failed(z) ? z : gate(s, spec, *zr, 1);
      if (failed(r) || failed(z = activate(s, spec, acts[0], *z)) ||
          failed(r = activate(s, spec, acts[0], *r)))
        return failure();
      if (h) {
        FailureOr<Value> rh = mul(s, *r, h);
        FailureOr<Value> rn =
            failed(rh) ? rh : sliceAxis(s, dir.r, 0, 2 * hh, 3 * hh);
        if (failed(rn) || failed(rn = recurrent(*rh, *rn, {})) ||
            failed(n = add(s, *n, *rn)))
          return failure();
      }
    }
    if (failed(n = activate(s, spec, acts[1], *n)))
      return failure();
    // h' = n + z * (h - n), PyTorch's arithmetic (ONNX writes (1 - z) n +
    // z h); with no previous state, n - z * n.
    FailureOr<Value> next;
    if (h) {
      FailureOr<Value> d = s.emit("graph.sub", {h, *n});
      FailureOr<Value> zd = failed(d) ? d : mul(s, *z, *d);
      next = failed(zd) ? zd : add(s, *n, *zd);
    } else {
      FailureOr<Value> zn = mul(s, *z, *n);
      next = failed(zn) ? zn : s.emit("graph.sub", {*n, *zn});
    }
    if (failed(next))
      return failure();
    dir.hLast = *next;
    return success();
  }

  FailureOr<Value> pre = xt;
  if (h) {
    FailureOr<Value> hr = recurrent(h, dir.r, {});
    if (failed(hr) || failed(pre = add(s, xt, *hr)))
      return failure();
  }
  if (spec.cell == Cell::Rnn) {
    FailureOr<Value> next = activate(s, spec, acts[0], *pre);
    if (failed(next))
      return failure();
    dir.hLast = *next;
    return success();
  }
  // LSTM, ONNX's gate order i, o, f, c: c' = f * c + i * g(x_c), h' = o *
  // h(c'), the peepholes on c for i and f and on c' for o.
  FailureOr<Value> i = gate(s, spec, *pre, 0);
  if (failed(i) || failed(i = peep(s, spec, dir, *i, 0, c)) ||
      failed(i = activate(s, spec, acts[0], *i)))
    return failure();
  FailureOr<Value> g = gate(s, spec, *pre, 3);
  if (failed(g) || failed(g = activate(s, spec, acts[1], *g)))
    return failure();
  FailureOr<Value> cNext = mul(s, *i, *g);
  if (failed(cNext))
    return failure();
  if (c) {
    FailureOr<Value> f = gate(s, spec, *pre, 2);
    if (failed(f) || failed(f = peep(s, spec, dir, *f, 2, c)) ||
        failed(f = activate(s, spec, acts[0], *f)))
      return failure();
    FailureOr<Value> fc = mul(s, *f, c);
    if (failed(fc) || failed(cNext = add(s, *fc, *cNext)))
      return failure();
  }
  FailureOr<Value> o = gate(s, spec, *pre, 1);
  if (failed(o) || failed(o = peep(s, spec, dir, *o, 1, *cNext)) ||
      failed(o = activate(s, spec, acts[0], *o)))
    return failure();
  FailureOr<Value> hc = activate(s, spec, acts[2], *cNext, /*clip=*/false);
  FailureOr<Value> next = failed(hc) ? hc : mul(s, *o, *hc);
  if (failed(next))
    return failure();
  dir.hLast = *next;
  dir.cLast = *cNext;
  return success();
}

// |values| each reshaped to |shape| (as many elements), then joined along
// |axis| (one value: itself).
FailureOr<Value> concatAlong(ImportState &s, ArrayRef<Value> values,
                             ArrayRef<int64_t> shape, int64_t axis) {
  SmallVector<Value> parts;
  for (Value v : values) {
    FailureOr<Value> r = reshapeTo(s, v, shape);
    if (failed(r))
      return failure();
    parts.push_back(*r);
  }
  if (parts.size() == 1)
    return parts[0];
  return s.emit("graph.concat", parts,
                {s.attr("axis", s.b.getI64IntegerAttr(axis))});
}

// Stacks |states| ([B, H] each) into [D, B, H] (batch-first: [B, D, H]).
FailureOr<Value> stackDirections(ImportState &s, const Spec &spec,
                                 ArrayRef<Value> states) {
  FailureOr<Value> r =
      concatAlong(s, states, {1, spec.batch, spec.hidden}, 0);
  if (failed(r) || !spec.batchFirst)
    return r;
  return s.emit("graph.transpose", {*r},
                {s.attr("perm", s.b.getDenseI64ArrayAttr({1, 0, 2}))});
}

LogicalResult importRecurrent(ImportState &s, Cell cell) {
  FailureOr<Spec> parsed = parse(s, cell);
  if (failed(parsed))
    return failure();
  const Spec &spec = *parsed;
  const Node &n = *s.node;
  // sequence_lens: accepted only when it is known and every sequence is
  // the whole length (padded batches would need per-sample masking).
  if (s.hasInput(4)) {
    const Tensor *lens = s.constInput(4);
    if (!lens)
      return s.error("sequence_lens must be known at import time");
    if (int64_t(lens->i.size()) != spec.batch)
      return s.error("sequence_lens has " + std::to_string(lens->i.size()) +
                     " lengths for a batch of " + std::to_string(spec.batch));
    if (!llvm::all_of(lens->i, [&](int64_t v) { return v == spec.steps; }))
      return s.error("sequence_lens other than the whole sequence (" +
                     std::to_string(spec.steps) +
                     " steps) are not supported: pad and mask instead");
  }
  // Each step is about 15 graph ops per direction, and the compiled code
  // grows with them.
  if (spec.steps > kMaxUnrolledSteps)
    return s.error("a sequence of " + std::to_string(spec.steps) +
                   " steps; at most " + std::to_string(kMaxUnrolledSteps) +
                   " are unrolled");
  FailureOr<Value> x = s.input(0);
  if (failed(x))
    return failure();
  int64_t t = spec.steps, b = spec.batch, h = spec.hidden,
          in = shapeOf(*x)[2];
  // X as [T B, I], time-major.
  FailureOr<Value> xs = *x;
  if (spec.batchFirst)
    xs = s.emit("graph.transpose", {*x},
                {s.attr("perm", s.b.getDenseI64ArrayAttr({1, 0, 2}))});
  if (failed(xs) || failed(xs = reshapeTo(s, *xs, {t * b, in})))
    return failure();

  size_t per = actsPerDir(cell);
  std::vector<Direction> dirs;
  for (int64_t d = 0; d < spec.dirs; ++d) {
    FailureOr<Direction> dir = direction(s, spec, d);
    if (failed(dir))
      return failure();
    dir->hLast = dir->h0;
    dir->cLast = dir->c0;
    SmallVector<Value> ops = {*xs, dir->w};
    if (dir->inBias)
      ops.push_back(dir->inBias);
    FailureOr<Value> proj = s.emit("graph.linear", ops); // [T B, G H]
    if (failed(proj))
      return failure();
    bool backwards = spec.reverse || d == 1;
    dir->ys.resize(size_t(t));
    for (int64_t k = 0; k < t; ++k) {
      int64_t ti = backwards ? t - 1 - k : k;
      FailureOr<Value> xt = sliceAxis(s, *proj, 0, ti * b, (ti + 1) * b);
      if (failed(xt) ||
          failed(step(s, spec, *dir, &spec.acts[size_t(d) * per], *xt)))
        return failure();
      dir->ys[size_t(ti)] = dir->hLast;
    }
    dirs.push_back(std::move(*dir));
  }

  auto wanted = [&](size_t i) {
    return i < n.outputs.size() && !n.outputs[i].empty();
  };
  if (wanted(0)) {
    // Y [T, D, B, H] (batch-first [B, T, D, H]).
    SmallVector<Value> perDir;
    for (Direction &dir : dirs) {
      FailureOr<Value> y = concatAlong(s, dir.ys, {1, 1, b, h}, 0);
      if (failed(y))
        return failure();
      perDir.push_back(*y);
    }
    const int64_t t = shapeOf(perDir[0])[0];
    FailureOr<Value> y = concatAlong(s, perDir, {t, 1, b, h}, 1);
    if (failed(y) ||
        (spec.batchFirst &&
         failed(y = s.emit(
                    "graph.transpose", {*y},
                    {s.attr("perm", s.b.getDenseI64ArrayAttr({2, 0, 1, 3}))}))))
      return failure();
    s.result(0, *y);
  }
  for (size_t o : {size_t(1), size_t(2)}) {
    if (!wanted(o))
      continue;
    if (o == 2 && cell != Cell::Lstm)
      return s.error("only LSTM has a third output");
    SmallVector<Value> last;
    for (Direction &dir : dirs)
      last.push_back(o == 1 ? dir.hLast : dir.cLast);
    FailureOr<Value> r = stackDirections(s, spec, last);
    if (failed(r))
      return failure();
    s.result(o, *r);
  }
  return success();
}

} // namespace

void registerRecurrentOps(OpTable &t) {
  t["LSTM"] = [](ImportState &s) { return importRecurrent(s, Cell::Lstm); };
  t["GRU"] = [](ImportState &s) { return importRecurrent(s, Cell::Gru); };
  t["RNN"] = [](ImportState &s) { return importRecurrent(s, Cell::Rnn); };
}

} // namespace ampc::onnx
