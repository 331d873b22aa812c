//===- Fold.cpp - Nodes computed at import time ---------------------------===//
//
// Exporters compute constants with graph nodes: PyTorch's scaled-dot-product
// attention export derives its scale from Shape -> Cast -> Sqrt -> Div and
// its causal mask from Expand -> Trilu -> Equal -> Where. When every input
// of such a node is known at import time the importer computes it on the
// host (numpy broadcasting; float math in double, rounded to the ONNX
// type), so the result stays a constant the attention pattern can read
// instead of becoming graph ops on constants.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace ampc::onnx {
namespace {

// Rounds |v| to what a tensor of |type| holds.
double roundTo(int32_t type, double v) {
  return type == kFloat ? double(float(v)) : v;
}

double at(const Tensor &t, int64_t k) {
  return isFloatType(t.type) ? t.f[k] : double(t.i[k]);
}

std::optional<std::vector<int64_t>>
broadcastShape(const std::vector<const Tensor *> &ts) {
  size_t rank = 0;
  for (const Tensor *t : ts)
    rank = std::max(rank, t->shape.size());
  std::vector<int64_t> out(rank, 1);
  for (const Tensor *t : ts)
    for (size_t i = 0; i < t->shape.size(); ++i) {
      int64_t &o = out[rank - t->shape.size() + i];
      int64_t d = t->shape[i];
      if (d != o && d != 1 && o != 1)
        return std::nullopt;
      if (d != 1)
        o = d;
    }
  return out;
}

// The flat index into |t| of the output element at |flat| (broadcasting).
int64_t sourceIndex(const Tensor &t, const std::vector<int64_t> &out,
                    int64_t flat) {
  int64_t idx = 0, stride = 1;
  size_t off = out.size() - t.shape.size();
  for (size_t i = out.size(); i-- > 0;) {
    int64_t coord = flat % out[i];
    flat /= out[i];
    if (i >= off) {
      int64_t d = t.shape[i - off];
      idx += (d == 1 ? 0 : coord) * stride;
      stride *= d;
    }
  }
  return idx;
}

Tensor makeLike(int32_t type, std::vector<int64_t> shape) {
  checkFoldShape(shape);
  Tensor r;
  r.type = type;
  r.shape = std::move(shape);
  if (isFloatType(type))
    r.f.resize(size_t(r.numel()));
  else
    r.i.resize(size_t(r.numel()));
  return r;
}

void put(Tensor &r, int64_t k, double v) {
  if (isFloatType(r.type))
    r.f[k] = roundTo(r.type, v);
  else
    r.i[k] = int64_t(v);
}

std::optional<double> unaryFn(const std::string &op, double x) {
  if (op == "Sqrt")
    return std::sqrt(x);
  if (op == "Neg")
    return -x;
  if (op == "Reciprocal")
    return 1.0 / x;
  if (op == "Exp")
    return std::exp(x);
  if (op == "Log")
    return std::log(x);
  if (op == "Abs")
    return std::abs(x);
  if (op == "Not")
    return x == 0 ? 1.0 : 0.0;
  return std::nullopt;
}

bool isBinary(const std::string &op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
         op == "Equal" || op == "Less" || op == "Greater";
}

double binaryFn(const std::string &op, double a, double b, bool ints) {
  if (op == "Add")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (op == "Div")
    return ints ? (b == 0 ? 0.0 : std::trunc(a / b)) : a / b;
  if (op == "Equal")
    return a == b;
  if (op == "Less")
    return a < b;
  return a > b; // Greater
}

// Elementwise over broadcast inputs: |fn| maps the inputs' values at one
// output element to the result.
template <typename Fn>
std::optional<Tensor> elementwise(const std::vector<const Tensor *> &in,
                                  int32_t type, Fn fn) {
  auto shape = broadcastShape(in);
  if (!shape)
    return std::nullopt;
  Tensor r = makeLike(type, *shape);
  std::vector<double> vals(in.size());
  for (int64_t k = 0; k < r.numel(); ++k) {
    for (size_t j = 0; j < in.size(); ++j)
      vals[j] = at(*in[j], sourceIndex(*in[j], *shape, k));
    put(r, k, fn(vals));
  }
  return r;
}

// Trilu(x, k): keeps the lower (upper = 0) or upper triangle of the last two
// dimensions, offset by the diagonal k.
std::optional<Tensor> trilu(const Tensor &x, int64_t k, bool upper) {
  if (x.shape.size() < 2)
    return std::nullopt;
  Tensor r = x;
  r.name.clear();
  int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  for (int64_t e = 0; e < r.numel(); ++e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep)
      put(r, e, 0.0);
  }
  return r;
}

} // namespace

static FailureOr<bool> fold(ImportState &s);

// Past kMaxFoldElements the node is imported as graph ops instead (an Expand
// of a large mask, a zeros_like); the ops that exist only to be folded say
// why they cannot be.
FailureOr<bool> foldAtImport(ImportState &s) {
  try {
    return fold(s);
  } catch (const ImportLimit &) {
    const std::string &op = s.node->opType;
    if (op == "Trilu" || op == "Equal" || op == "Less" || op == "Greater" ||
        op == "Not")
      throw;
    return false;
  }
}

static FailureOr<bool> fold(ImportState &s) {
  const Node &n = *s.node;
  std::vector<const Tensor *> in;
  for (unsigned i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i].empty())
      continue;
    const Tensor *t = s.constInput(i);
    if (!t)
      return false;
    in.push_back(t);
  }
  if (in.empty() || n.outputs.size() != 1)
    return false;
  std::optional<Tensor> r;
  const std::string &op = n.opType;
  if (in.size() == 1 && unaryFn(op, 0.0)) {
    int32_t type = op == "Not" ? kBool : in[0]->type;
    r = elementwise(in, type, [&](const std::vector<double> &v) {
      return *unaryFn(op, v[0]);
    });
  } else if (in.size() == 2 && isBinary(op)) {
    bool ints = !isFloatType(in[0]->type) && !isFloatType(in[1]->type);
    // The integer ops (shape chains) are the elementwise importers' own.
    if (ints && op != "Equal" && op != "Less" && op != "Greater")
      return false;
    bool compare = op == "Equal" || op == "Less" || op == "Greater";
    int32_t type = compare ? kBool : in[0]->type;
    r = elementwise(in, type, [&](const std::vector<double> &v) {
      return binaryFn(op, v[0], v[1], ints);
    });
  } else if (op == "Where" && in.size() == 3) {
    r = elementwise(in, in[1]->type, [](const std::vector<double> &v) {
      return v[0] != 0 ? v[1] : v[2];
    });
  } else if (op == "Expand" && in.size() == 2 && !isFloatType(in[1]->type)) {
    Tensor shape = makeLike(kInt64, in[1]->i);
    r = elementwise({in[0], &shape}, in[0]->type,
                    [](const std::vector<double> &v) { return v[0]; });
  } else if (op == "Trilu") {
    if (in.size() > 1 && in[1]->numel() != 1)
      return s.error("k must be a scalar");
    int64_t k = in.size() > 1 ? int64_t(at(*in[1], 0)) : 0;
    r = trilu(*in[0], k, s.intAttr("upper", 1) != 0);
  } else {
    return false;
  }
  if (!r)
    return false;
  s.setConst(n.outputs[0], std::move(*r));
  return true;
}

// Trilu and the comparisons exist in exports only to build masks from
// shapes: imported when known at import time (above), an error otherwise.
void registerFoldOnlyOps(OpTable &t) {
  for (const char *op : {"Trilu", "Equal", "Less", "Greater", "Not"})
    t[op] = [](ImportState &s) {
      return s.error("supported only on inputs known at import time (masks "
                     "built from shapes); here an input is a graph value");
    };
}

} // namespace ampc::onnx
