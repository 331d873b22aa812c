//===- Patterns.cpp - Erf-based GELU -> Gelu
//---------------------------------===//
#include "compiler/import/onnx/Patterns.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace ampc::onnx {
namespace {

class Matcher {
public:
  explicit Matcher(const Graph &g) : g(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string &o : g.nodes[i].outputs)
        producer[o] = i;
      for (const std::string &in : g.nodes[i].inputs)
        ++uses[in];
    }
    for (const ValueInfo &o : g.outputs)
      uses[o.name] += 2; // a graph output is never an intermediate
    for (const Tensor &t : g.initializers)
      if (t.numel() == 1 && isFloatType(t.type))
        scalars[t.name] = t.f[0];
    for (const Node &n : g.nodes)
      if (n.opType == "Constant" && n.attrs.size() == 1 && n.attrs[0].t &&
          n.attrs[0].t->numel() == 1 && isFloatType(n.attrs[0].t->type))
        scalars[n.outputs[0]] = n.attrs[0].t->f[0];
  }

  const Node *producerOf(const std::string &v) const {
    auto it = producer.find(v);
    return it == producer.end() ? nullptr : &g.nodes[it->second];
  }
  // The one node reading |v| (and nothing else reads it), or null.
  const Node *onlyUser(const std::string &v) const {
    auto it = uses.find(v);
    if (it == uses.end() || it->second != 1)
      return nullptr;
    for (const Node &n : g.nodes)
      for (const std::string &in : n.inputs)
        if (in == v)
          return &n;
    return nullptr;
  }
  bool isScalar(const std::string &v, double want) const {
    auto it = scalars.find(v);
    return it != scalars.end() && std::abs(it->second - want) <= 1e-4 * want;
  }
  // For a binary node reading |v| and a scalar equal to |want|: true.
  bool withScalar(const Node &n, const std::string &v, double want) const {
    if (n.inputs.size() != 2)
      return false;
    return (n.inputs[0] == v && isScalar(n.inputs[1], want)) ||
           (n.inputs[1] == v && isScalar(n.inputs[0], want));
  }
  // The operand of binary |n| that is not |v|.
  static std::string other(const Node &n, const std::string &v) {
    return n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
  }
  size_t index(const Node *n) const { return size_t(n - g.nodes.data()); }

  // Matches at Erf node |erf|: the nodes to drop and the final node.
  std::optional<std::pair<std::set<size_t>, size_t>>
  match(const Node &erf, std::string &x) const {
    const Node *scale = producerOf(erf.inputs.at(0));
    if (!scale || !onlyUser(erf.inputs[0]) || scale->inputs.size() != 2)
      return std::nullopt;
    if (scale->opType == "Div" && isScalar(scale->inputs[1], std::sqrt(2.0)))
      x = scale->inputs[0];
    else if (scale->opType == "Mul" &&
             withScalar(*scale, scale->inputs[0], 1 / std::sqrt(2.0)))
      x = scale->inputs[0];
    else if (scale->opType == "Mul" &&
             withScalar(*scale, scale->inputs[1], 1 / std::sqrt(2.0)))
      x = scale->inputs[1];
    else
      return std::nullopt;
    const Node *add = onlyUser(erf.outputs[0]);
    if (!add || add->opType != "Add" || !withScalar(*add, erf.outputs[0], 1.0))
      return std::nullopt;
    const Node *mul = onlyUser(add->outputs[0]);
    if (!mul || mul->opType != "Mul" || mul->inputs.size() != 2)
      return std::nullopt;
    std::set<size_t> drop = {index(scale), index(&erf), index(add)};
    std::string y = other(*mul, add->outputs[0]);
    if (y == x) { // x * (1 + erf) then * 0.5
      const Node *half = onlyUser(mul->outputs[0]);
      if (!half || half->opType != "Mul" ||
          !withScalar(*half, mul->outputs[0], 0.5))
        return std::nullopt;
      drop.insert(index(mul));
      return std::make_pair(drop, index(half));
    }
    // (x * 0.5) * (1 + erf)
    const Node *half = producerOf(y);
    if (!half || half->opType != "Mul" || !onlyUser(y) ||
        !withScalar(*half, x, 0.5))
      return std::nullopt;
    drop.insert(index(half));
    return std::make_pair(drop, index(mul));
  }

private:
  const Graph &g;
  std::map<std::string, size_t> producer;
  std::map<std::string, int> uses;
  std::map<std::string, double> scalars;
};

} // namespace

std::vector<Node> fuseErfGelu(const Graph &g) {
  Matcher m(g);
  std::set<size_t> dropped;
  std::map<size_t, Node> replaced;
  for (const Node &n : g.nodes) {
    if (n.opType != "Erf" || n.inputs.empty() || n.outputs.empty())
      continue;
    std::string x;
    auto found = m.match(n, x);
    if (!found)
      continue;
    Node gelu;
    gelu.name = n.name;
    gelu.opType = "Gelu";
    gelu.inputs = {x};
    gelu.outputs = {g.nodes[found->second].outputs.at(0)};
    dropped.insert(found->first.begin(), found->first.end());
    replaced[found->second] = std::move(gelu);
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (auto it = replaced.find(i); it != replaced.end())
      nodes.push_back(it->second);
    else if (!dropped.count(i))
      nodes.push_back(g.nodes[i]);
  }
  return nodes;
}

} // namespace ampc::onnx
