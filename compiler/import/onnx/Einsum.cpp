//===- Einsum.cpp - Einsum as transpose/reshape + (batch_)matmul ----------===//
//
// Exporters write torch.einsum as an Einsum node; what models use it for is
// matmuls with the operands' dimensions in some order ("bhqd,bhkd->bhqk",
// "bij,bjk->bik", "ij,jk->ik") and the odd transpose or sum. Two operands:
// each is transposed to [batch, free, contracted] / [batch, contracted,
// free] order, reshaped to 3-D (2-D without batch letters), multiplied by
// one batch_matmul (matmul), then reshaped and transposed to the output's
// letters (implicit output: the letters used once, sorted). One operand: reduce_sum over the letters the output drops, then
// a transpose. Letters repeated within one operand (diagonals) are an
// error; an ellipsis stands for the leading dimensions the letters leave.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace ampc::onnx {
namespace {

FailureOr<Value> transposed(ImportState &s, Value x, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == int64_t(i);
  if (identity)
    return x;
  return s.emit("graph.transpose", {x},
                {s.attr("perm", s.b.getDenseI64ArrayAttr(perm))});
}

// Replaces "..." by letters not in the equation, as many as the operand's
// rank leaves (the output gets the most any operand had).
FailureOr<std::vector<std::string>>
parse(ImportState &s, std::string eq, const std::vector<size_t> &ranks) {
  auto fail = [&](const Twine &msg) -> FailureOr<std::vector<std::string>> {
    (void)s.error(msg);
    return failure();
  };
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  if (arrow == std::string::npos) {
    // Implicit output: the letters used once, in alphabetical order.
    if (eq.find("...") != std::string::npos)
      return fail("equation '" + eq +
                  "': an ellipsis needs an explicit output ('->')");
    std::map<char, int> count;
    for (char c : eq)
      if (c != ',')
        ++count[c];
    arrow = eq.size();
    eq += "->";
    for (auto [c, n] : count)
      if (n == 1)
        eq += c;
  }
  std::vector<std::string> terms;
  std::string lhs = eq.substr(0, arrow);
  for (size_t pos = 0;;) {
    size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma - pos));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  terms.push_back(eq.substr(arrow + 2));
  if (terms.size() - 1 != ranks.size())
    return fail("equation '" + eq + "' does not match the " +
                   Twine(ranks.size()) + " inputs");
  std::string spare;
  for (char c = 'A'; c <= 'Z'; ++c)
    if (eq.find(c) == std::string::npos)
      spare += c;
  size_t most = 0;
  for (size_t i = 0; i + 1 < terms.size(); ++i) {
    std::string &t = terms[i];
    size_t dots = t.find("...");
    if (dots == std::string::npos)
      continue;
    size_t n = ranks[i] + 3 - t.size();
    if (ranks[i] + 3 < t.size() || n > spare.size())
      return fail("equation '" + eq + "': bad ellipsis");
    most = std::max(most, n);
    t.replace(dots, 3, spare.substr(spare.size() - n));
  }
  std::string &out = terms.back();
  if (size_t dots = out.find("..."); dots != std::string::npos)
    out.replace(dots, 3, spare.substr(spare.size() - most));
  for (size_t i = 0; i < terms.size(); ++i) {
    std::set<char> seen(terms[i].begin(), terms[i].end());
    if (seen.size() != terms[i].size())
      return fail("equation '" + eq +
                     "' repeats a letter within one term (diagonals are not "
                     "supported)");
    if (i + 1 < terms.size() && terms[i].size() != ranks[i])
      return fail("equation '" + eq + "': term '" + terms[i] +
                     "' does not match input " + Twine(i) + "'s rank " +
                     Twine(ranks[i]));
  }
  return terms;
}

LogicalResult einsum(ImportState &s) {
  if (failed(s.onlyAttrs({"equation"})))
    return failure();
  std::vector<Value> in;
  std::vector<size_t> ranks;
  for (unsigned i = 0; i < s.node->inputs.size(); ++i) {
    FailureOr<Value> v = s.input(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
    ranks.push_back(shapeOf(*v).size());
  }
  if (in.empty() || in.size() > 2)
    return s.error("only one or two operands are supported");
  auto terms = parse(s, s.stringAttr("equation", ""), ranks);
  if (failed(terms))
    return failure();
  const std::string &out = terms->back();
  std::map<char, int64_t> size;
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t d = 0; d < ranks[i]; ++d) {
      char c = (*terms)[i][d];
      int64_t n = shapeOf(in[i])[d];
      if (size.count(c) && size[c] != n)
        return s.error(std::string("letter '") + c + "' has sizes " +
                       Twine(size[c]) + " and " + Twine(n) +
                       " (broadcasting is not supported)");
      size[c] = n;
    }
  for (char c : out)
    if (!size.count(c))
      return s.error(std::string("output letter '") + c +
                     "' is in no input");
  auto indexIn = [](const std::string &t, char c) {
    return int64_t(t.find(c));
  };

  if (in.size() == 1) {
    const std::string &a = (*terms)[0];
    SmallVector<int64_t> axes;
    std::string kept;
    for (size_t d = 0; d < a.size(); ++d) {
      if (out.find(a[d]) == std::string::npos)
        axes.push_back(int64_t(d));
      else
        kept += a[d];
    }
    Value x = in[0];
    if (!axes.empty()) {
      FailureOr<Value> r = s.emit(
          "graph.reduce_sum", {x},
          {s.attr("axes", s.b.getDenseI64ArrayAttr(axes)),
           s.attr("keepdim", s.b.getBoolAttr(false))});
      if (failed(r))
        return failure();
      x = *r;
    }
    SmallVector<int64_t> perm;
    for (char c : out)
      perm.push_back(indexIn(kept, c));
    FailureOr<Value> r = transposed(s, x, perm);
    if (failed(r))
      return failure();
    s.result(0, *r);
    return success();
  }

  const std::string &a = (*terms)[0], &b = (*terms)[1];
  std::string batch, freeA, freeB, contracted;
  for (char c : a) {
    bool inB = b.find(c) != std::string::npos;
    bool inOut = out.find(c) != std::string::npos;
    if (inB && inOut)
      batch += c;
    else if (inB)
      contracted += c;
    else if (inOut)
      freeA += c;
    else
      return s.error(std::string("letter '") + c +
                     "' is summed within one operand (not supported)");
  }
  for (char c : b)
    if (a.find(c) == std::string::npos) {
      if (out.find(c) == std::string::npos)
        return s.error(std::string("letter '") + c +
                       "' is summed within one operand (not supported)");
      freeB += c;
    }
  auto prod = [&](const std::string &letters) {
    int64_t p = 1;
    for (char c : letters)
      p *= size[c];
    return p;
  };
  auto arrange = [&](Value x, const std::string &term,
                     const std::string &order,
                     ArrayRef<int64_t> shape) -> FailureOr<Value> {
    SmallVector<int64_t> perm;
    for (char c : order)
      perm.push_back(indexIn(term, c));
    FailureOr<Value> t = transposed(s, x, perm);
    if (failed(t))
      return failure();
    return reshapeTo(s, *t, shape);
  };
  int64_t nb = prod(batch), m = prod(freeA), n = prod(freeB),
          k = prod(contracted);
  bool batched = !batch.empty();
  SmallVector<int64_t> sa = {m, k}, sb = {k, n};
  if (batched) {
    sa.insert(sa.begin(), nb);
    sb.insert(sb.begin(), nb);
  }
  FailureOr<Value> x = arrange(in[0], a, batch + freeA + contracted, sa);
  FailureOr<Value> y = arrange(in[1], b, batch + contracted + freeB, sb);
  if (failed(x) || failed(y))
    return failure();
  FailureOr<Value> r =
      s.emit(batched ? "graph.batch_matmul" : "graph.matmul", {*x, *y});
  if (failed(r))
    return failure();
  std::string order = batch + freeA + freeB;
  SmallVector<int64_t> full;
  for (char c : order)
    full.push_back(size[c]);
  if (failed(r = reshapeTo(s, *r, full)))
    return failure();
  SmallVector<int64_t> perm;
  for (char c : out)
    perm.push_back(indexIn(order, c));
  if (failed(r = transposed(s, *r, perm)))
    return failure();
  s.result(0, *r);
  return success();
}

} // namespace

void registerEinsumOps(OpTable &t) { t["Einsum"] = einsum; }

} // namespace ampc::onnx
