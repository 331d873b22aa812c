//===- Importer.cpp - ONNX graph -> graph.model
//------------------------------===//
//
// Order of the model block: graph inputs (dynamic dims fixed by the
// options), then one graph.param per floating-point initializer a node reads
// (its value goes to the weights file; the param's init is zeros, the
// training binary's --init-weights loads the values), then the nodes in
// their (topological) order, then graph.output with the loss first.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/Importer.h"
#include "compiler/import/onnx/ImportState.h"
#include "compiler/import/onnx/Patterns.h"

#include "dialects/Graph/GraphAttrs.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;

namespace ampc::onnx {

const OpTable &opTable() {
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseOps(t);
    registerLinalgOps(t);
    registerShapeOps(t);
    registerNormOps(t);
    registerConvOps(t);
    registerReduceOps(t);
    registerSliceOps(t);
    registerFoldOnlyOps(t);
    registerEinsumOps(t);
    registerResizeOps(t);
    registerIndexingOps(t);
    registerRecurrentOps(t);
    registerSequenceOps(t);
    return t;
  }();
  return table;
}

namespace {

// Output and symbol names: ONNX allows any string; keep [A-Za-z0-9_.].
std::string sanitize(const std::string &name) {
  std::string s;
  for (char c : name)
    s += (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c
                                                                          : '_';
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0])))
    s = "v" + s;
  return s;
}

std::string modelNameOf(const Graph &g, const ImportOptions &o) {
  if (!o.modelName.empty())
    return o.modelName;
  std::string stem = o.path;
  if (auto slash = stem.find_last_of('/'); slash != std::string::npos)
    stem = stem.substr(slash + 1);
  if (auto dot = stem.find_last_of('.'); dot != std::string::npos)
    stem = stem.substr(0, dot);
  return sanitize(stem.empty() ? g.name : stem);
}

class Importer {
public:
  Importer(MLIRContext &context, const Graph &g, const ImportOptions &o)
      : context(context), g(g), o(o), b(&context),
        s(b, o.path, g.opset ? g.opset : 13) {}

  std::optional<ImportResult> run();

private:
  LogicalResult addInputs(std::set<std::string> &initNames);
  LogicalResult addInitializers(const std::set<std::string> &used);
  void noteSharedNormWeights();
  void noteAnonymousWeights();
  LogicalResult checkStructure();
  LogicalResult addNodes();
  LogicalResult importNode(const OpTable &table);
  LogicalResult importNodeOps(const OpTable &table);
  LogicalResult addOutputs(Block &block);
  FailureOr<Value> appendLoss(Value output);

  MLIRContext &context;
  const Graph &g;
  const ImportOptions &o;
  OpBuilder b;
  ImportState s;
  Operation *lastInput = nullptr;
  std::vector<Weight> weights;
  std::vector<std::string> notes;
  std::vector<Node> nodes; // g's, with patterns fused
};

LogicalResult Importer::addInputs(std::set<std::string> &initNames) {
  for (const Tensor &t : g.initializers)
    initNames.insert(t.name);
  for (const ValueInfo &in : g.inputs) {
    // Older exporters list initializers among the inputs too.
    if (initNames.count(in.name))
      continue;
    FailureOr<Type> elem = s.elementType(in.type);
    if (failed(elem))
      return s.error("graph input '" + in.name + "' has element type " +
                     dataTypeName(in.type) +
                     ", not one of FLOAT, FLOAT16, BFLOAT16, INT32, INT64");
    if (!in.hasShape)
      return s.error("graph input '" + in.name + "' has no shape");
    SmallVector<int64_t> shape;
    for (size_t d = 0; d < in.dims.size(); ++d) {
      const Dim &dim = in.dims[d];
      if (dim.value > 0) {
        shape.push_back(dim.value);
        continue;
      }
      auto named = o.dims.find(dim.param);
      if (!dim.param.empty() && named != o.dims.end()) {
        shape.push_back(named->second);
      } else if (d == 0 && o.batch) {
        shape.push_back(*o.batch);
      } else {
        std::string what =
            dim.param.empty() ? std::string("unnamed") : "'" + dim.param + "'";
        return s.error("graph input '" + in.name + "' dimension " + Twine(d) +
                       " (" + what + ") is dynamic; fix it with " +
                       (d == 0 ? "--batch N or " : "") +
                       (dim.param.empty() ? std::string("--dim NAME=N")
                                          : "--dim " + dim.param + "=N"));
      }
    }
    if (in.name.find_first_of(",=") != std::string::npos)
      return s.error(
          "graph input '" + in.name +
          "' has a ',' or '=' in its name, which --data cannot bind");
    auto op = graph::InputOp::create(
        b, s.namedLoc(in.name), RankedTensorType::get(shape, *elem), in.name);
    lastInput = op;
    s.set(in.name, op.getResult());
  }
  return success();
}

// True if every path from |name| through view-like nodes ends in a
// comparison, a Where condition or a Shape: the value only builds masks, so
// it has no gradient to train.
bool feedsOnlyMasksIn(const Graph &g, const std::string &name, int depth) {
  if (depth > 16)
    return false;
  bool any = false;
  for (const Node &n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != name)
        continue;
      any = true;
      const std::string &op = n.opType;
      if (op == "Equal" || op == "Less" || op == "Greater" ||
          op == "LessOrEqual" || op == "GreaterOrEqual" || op == "Shape" ||
          (op == "Where" && i == 0))
        continue;
      bool view = op == "Slice" || op == "Reshape" || op == "Unsqueeze" ||
                  op == "Squeeze" || op == "Transpose" || op == "Identity" ||
                  op == "Expand" || op == "Cast";
      if (!view || i != 0 || n.outputs.size() != 1 ||
          !feedsOnlyMasksIn(g, n.outputs[0], depth + 1))
        return false;
    }
  return any;
}

// Floating-point initializers of more than one element become parameters
// (DOUBLE, FLOAT16 and BFLOAT16 ones too: a model exported after .double()
// or .half() trains like the FLOAT one), and those of one element
// (rank >= 1) that only layers read, as their weight or bias (a
// Linear(1, 1), Linear(h, 1)'s bias, nn.PReLU()'s slope); the rest
// (integer shapes, scalar constants such as a Pow exponent or an attention
// scale) stay import-time constants.
LogicalResult Importer::addInitializers(const std::set<std::string> &used) {
  std::map<std::string, const Tensor *> inits;
  for (const Tensor &t : g.initializers)
    inits[t.name] = &t;
  std::map<std::string, const Node *> producer;
  for (const Node &n : g.nodes)
    for (const std::string &out : n.outputs)
      producer[out] = &n;
  // A MatMul by a weight matrix (an initializer of rank >= 2): a Linear.
  auto isLinear = [&](const std::string &value) {
    auto p = producer.find(value);
    if (p == producer.end() || p->second->opType != "MatMul" ||
        p->second->inputs.size() != 2)
      return false;
    auto w = inits.find(p->second->inputs[1]);
    return w != inits.end() && w->second->shape.size() >= 2;
  };
  std::map<std::string, bool> onlyLayersRead; // per initializer name
  for (const Node &n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const std::string &in = n.inputs[i];
      if (!inits.count(in))
        continue;
      bool layer = ((n.opType == "Gemm" || n.opType == "Conv" ||
                     n.opType == "ConvTranspose") &&
                    (i == 1 || i == 2)) ||
                   ((n.opType == "MatMul" || n.opType == "PRelu") &&
                    i == 1) ||
                   (n.opType == "Add" && n.inputs.size() == 2 &&
                    isLinear(n.inputs[1 - i]));
      auto [it, fresh] = onlyLayersRead.emplace(in, layer);
      if (!fresh)
        it->second = it->second && layer;
    }
  // BatchNormalization's running statistics are state, not parameters.
  std::set<std::string> frozen;
  for (const Node &n : g.nodes)
    if (n.opType == "BatchNormalization")
      for (size_t i = 3; i < n.inputs.size(); ++i)
        frozen.insert(n.inputs[i]);
  // Resize's roi/scales and Upsample's scales are read at import time.
  for (const Node &n : g.nodes)
    if (n.opType == "Resize" || n.opType == "Upsample")
      for (size_t i = 1; i < n.inputs.size(); ++i)
        frozen.insert(n.inputs[i]);
  // Masks are constants, not parameters: the dynamo exporter's causal mask
  // (an initializer of 0 and its type's lowest value, or -inf: -65504 in a
  // model exported after .half()), and buffers that only feed comparisons
  // (nanoGPT's registered tril, compared with 0 for masked_fill).
  for (const Tensor &t : g.initializers) {
    const double lowest = t.type == kFloat16 ? 65504.0 : 1e30;
    if (llvm::any_of(t.f,
                     [&](double v) { return !(std::abs(v) < lowest); }) ||
        feedsOnlyMasksIn(g, t.name, 0))
      frozen.insert(t.name);
  }
  bool halfNoted = false;
  for (const Tensor &t : g.initializers) {
    bool param = isFloatType(t.type) &&
                 (t.numel() > 1 || (t.numel() == 1 && !t.shape.empty() &&
                                    onlyLayersRead[t.name])) &&
                 used.count(t.name) && !frozen.count(t.name);
    if (!param) {
      s.setConst(t.name, t);
      continue;
    }
    // Parameters are FP32 master weights. A model exported after .half()
    // or .bfloat16() reads its weights in that type: the param is cast to
    // it, as PyTorch's optimizer would step a half model's FP32 copy.
    Location loc = s.namedLoc(t.name);
    auto type = RankedTensorType::get(t.shape, b.getF32Type());
    Value weight = graph::ParamOp::create(b, loc, type, t.name,
                                          graph::ZerosInitAttr::get(&context));
    FailureOr<Type> elem = s.elementType(t.type);
    if (succeeded(elem) && *elem != b.getF32Type()) {
      weight = graph::CastOp::create(
          b, loc, RankedTensorType::get(t.shape, *elem), weight);
      const bool half = t.type == kFloat16;
      const std::string elemName = half ? "f16" : "bf16";
      if (!halfNoted)
        notes.push_back(
            std::string("the weights are ") + dataTypeName(t.type) +
            " (exported after " + (half ? ".half()" : ".bfloat16()") +
            "): they become FP32 parameters cast to " + elemName +
            ", and ampc compile's default --amp=off runs every op in " +
            elemName + ", the loss too; --amp=" + (half ? "fp16" : "bf16") +
            " keeps losses, norms and softmax in FP32");
      halfNoted = true;
    }
    s.set(t.name, weight);
    Weight w;
    w.name = t.name;
    w.shape = t.shape;
    w.data.assign(t.f.begin(), t.f.end());
    weights.push_back(std::move(w));
  }
  noteSharedNormWeights();
  noteAnonymousWeights();
  return success();
}

// A parameter that is the scale or bias of several norms trains as one.
// Models do not share a norm's weights, but an exporter that merges
// initializers of equal value (torch.onnx.export's dynamo=True: freshly
// initialised norms all hold ones and zeros) makes them shared.
void Importer::noteSharedNormWeights() {
  std::set<std::string> params;
  for (const Weight &w : weights)
    params.insert(w.name);
  // (parameter, input index) -> the norms reading it there, in order.
  std::map<std::pair<std::string, size_t>, std::vector<const Node *>> readers;
  for (const Node &n : g.nodes) {
    const bool norm = llvm::StringRef(n.opType).ends_with("Normalization");
    for (size_t i = 1; norm && i < std::min<size_t>(n.inputs.size(), 3); ++i)
      if (params.count(n.inputs[i]))
        readers[{n.inputs[i], i}].push_back(&n);
  }
  bool any = false;
  for (const auto &[use, nodes] : readers) {
    if (nodes.size() < 2)
      continue;
    any = true;
    auto nameOf = [](const Node *n) {
      return n->name.empty() ? "an unnamed node" : "'" + n->name + "'";
    };
    std::string which = nameOf(nodes[0]) + ", " + nameOf(nodes[1]);
    if (nodes.size() > 2)
      which += " and " + std::to_string(nodes.size() - 2) + " more";
    notes.push_back("'" + use.first + "' is the " +
                    (use.second == 1 ? "scale" : "bias") + " of " +
                    std::to_string(nodes.size()) + " normalizations (" +
                    which + "): they train as one parameter");
  }
  if (any)
    notes.push_back("exporters that merge initializers of equal value share "
                    "norms' weights so (torch.onnx.export's dynamo=True with "
                    "its optimizer); export with optimize=False or "
                    "dynamo=False to train each norm's own");
}

// The dynamo exporter's optimizer stores the weights it folds (Linear's,
// pre-transposed) as new initializers named val_N: they train, but under
// names a PyTorch state_dict does not have.
void Importer::noteAnonymousWeights() {
  std::vector<std::string> anonymous;
  for (const Weight &w : weights) {
    llvm::StringRef name(w.name);
    if (name.consume_front("val_") && !name.empty() &&
        name.find_first_not_of("0123456789") == llvm::StringRef::npos)
      anonymous.push_back(w.name);
  }
  if (anonymous.empty())
    return;
  std::string which = "'" + anonymous[0] + "'";
  if (anonymous.size() > 1)
    which += " and " + std::to_string(anonymous.size() - 1) + " more";
  notes.push_back(which + " look like weights the dynamo exporter's "
                  "optimizer renamed (torch.onnx.export(dynamo=True)): "
                  "they train, but checkpoints and --init-weights use these "
                  "names, not the state_dict's; export with optimize=False "
                  "(or dynamo=False) to keep them");
}

// What ONNX's checker requires of the graph's wiring and the importers
// assume: every node defines an output (Constant alone has no input), and
// each value is defined once (single assignment).
LogicalResult Importer::checkStructure() {
  std::map<std::string, std::string> definedBy;
  for (const ValueInfo &in : g.inputs)
    definedBy.emplace(in.name, "a graph input");
  for (const Tensor &t : g.initializers)
    definedBy.emplace(t.name, "an initializer");
  for (const Node &node : g.nodes) {
    s.node = &node;
    // A known op names its first output, except the recurrent ops, whose
    // outputs are all optional (Y left out when only Y_h is read); ops ampc
    // does not import get the unsupported-op error.
    const bool known = opTable().count(node.opType);
    const bool optionalOutputs = node.opType == "LSTM" ||
                                 node.opType == "GRU" || node.opType == "RNN";
    if (known &&
        (optionalOutputs
             ? llvm::all_of(node.outputs,
                            [](const std::string &o) { return o.empty(); })
             : node.outputs.empty() || node.outputs[0].empty()))
      return s.error("the node has no output");
    bool anyInput = false;
    for (const std::string &in : node.inputs)
      anyInput |= !in.empty();
    if (known && !anyInput && node.opType != "Constant")
      return s.error("the node has no input");
    std::string self = node.name.empty()
                           ? "an unnamed " + node.opType + " node"
                           : "node '" + node.name + "'";
    for (const std::string &out : node.outputs) {
      if (out.empty())
        continue;
      auto [it, fresh] = definedBy.emplace(out, self);
      if (!fresh)
        return s.error("output '" + out + "' is already defined by " +
                       it->second);
    }
  }
  s.node = nullptr;
  return success();
}

LogicalResult Importer::addNodes() {
  if (failed(checkStructure()))
    return failure();
  const OpTable &table = opTable();
  nodes = fuseErfGelu(g);
  s.indexGraph(nodes, g.outputs);
  for (const Node &node : nodes) {
    s.node = &node;
    if (!node.domain.empty() && node.domain != "ai.onnx")
      return s.error("domain '" + node.domain + "' is not supported");
    // The importers index what ONNX's schemas promise; a malformed node
    // that breaks a promise they did not check (an empty scalar tensor, a
    // size past memory) is an error at the node, not an abort.
    LogicalResult r = failure();
    try {
      r = importNode(table);
    } catch (const ImportLimit &e) {
      return s.error(e.what());
    } catch (const std::bad_alloc &) {
      return s.error("does not fit in memory");
    } catch (const std::exception &e) {
      return s.error(Twine("malformed node (") + e.what() + ")");
    }
    if (failed(r))
      return failure();
  }
  s.node = nullptr;
  return success();
}

LogicalResult Importer::importNode(const OpTable &table) {
  s.attrKindError.clear();
  if (failed(importNodeOps(table)))
    return failure();
  if (!s.attrKindError.empty())
    return s.error(s.attrKindError);
  return success();
}

LogicalResult Importer::importNodeOps(const OpTable &table) {
  const Node &node = *s.node;
  FailureOr<bool> done = foldAtImport(s);
  if (succeeded(done) && !*done)
    done = importAttention(s);
  if (succeeded(done) && !*done)
    done = importLinear(s);
  if (succeeded(done) && !*done)
    done = importLinearBias(s);
  if (failed(done))
    return failure();
  if (*done)
    return success();
  auto it = table.find(node.opType);
  if (it == table.end())
    return s.error("op type " + node.opType +
                   " is not supported by ampc import");
  return it->second(s);
}

FailureOr<Value> Importer::appendLoss(Value output) {
  auto type = cast<RankedTensorType>(output.getType());
  Location loc = NameLoc::get(StringAttr::get(&context, o.loss),
                              FileLineColLoc::get(&context, o.path, 0, 0));
  OpBuilder::InsertPoint afterNodes = b.saveInsertionPoint();
  Type labelType;
  if (o.loss == "cross_entropy") {
    if (type.getRank() < 2)
      return emitError(loc)
             << "--loss=cross_entropy: output '" << o.lossOutput
             << "' has type " << type << "; it needs logits [..., classes]";
    labelType =
        RankedTensorType::get(type.getShape().drop_back(), b.getI64Type());
  } else if (o.loss == "mse") {
    labelType = type;
  } else {
    return emitError(loc) << "unknown loss '" << o.loss
                          << "' (cross_entropy or mse)";
  }
  if (s.has(o.lossLabel))
    return emitError(loc) << "--loss: label input '" << o.lossLabel
                          << "' already names a value of the graph";
  if (lastInput)
    b.setInsertionPointAfter(lastInput);
  else
    b.setInsertionPointToStart(b.getInsertionBlock());
  Value label = graph::InputOp::create(b, loc, labelType, o.lossLabel);
  b.restoreInsertionPoint(afterNodes);
  OperationState st(loc,
                    o.loss == "mse" ? "graph.mse_loss" : "graph.cross_entropy");
  st.addOperands({output, label});
  st.addTypes(RankedTensorType::get({}, type.getElementType()));
  return b.create(st)->getResult(0);
}

LogicalResult Importer::addOutputs(Block &block) {
  SmallVector<Value> values;
  SmallVector<std::string> names;
  Value loss;
  if (o.forwardOnly) {
    Tensor zero;
    zero.type = kFloat;
    zero.f = {0.0};
    loss = s.constantOf(zero);
  } else if (!o.loss.empty()) {
    if (!s.has(o.lossOutput))
      return emitError(s.loc())
             << "--loss: the graph has no value named '" << o.lossOutput << "'";
    FailureOr<Value> out = s.get(o.lossOutput);
    if (failed(out))
      return failure();
    FailureOr<Value> l = appendLoss(*out);
    if (failed(l))
      return failure();
    loss = *l;
  }
  for (const ValueInfo &out : g.outputs) {
    FailureOr<Value> v = s.get(out.name);
    if (failed(v))
      return failure();
    auto type = cast<RankedTensorType>(v->getType());
    if (!loss && type.getRank() == 0 && isa<FloatType>(type.getElementType())) {
      loss = *v;
      continue;
    }
    values.push_back(*v);
    names.push_back(sanitize(out.name));
  }
  if (!loss)
    return emitError(s.loc())
           << "the graph's outputs hold no scalar loss; append one with "
              "--loss=cross_entropy:OUTPUT,LABEL_INPUT or "
              "--loss=mse:OUTPUT,TARGET_INPUT";
  values.insert(values.begin(), loss);
  names.insert(names.begin(), "loss");
  llvm::StringSet<> seen;
  for (std::string &n : names)
    while (!seen.insert(n).second)
      n += "_";
  SmallVector<StringRef> refs(names.begin(), names.end());
  OperationState st(FileLineColLoc::get(&context, o.path, 0, 0),
                    "graph.output");
  st.addOperands(values);
  st.addAttribute("names", b.getStrArrayAttr(refs));
  b.setInsertionPointToEnd(&block);
  b.create(st);
  return success();
}

std::optional<ImportResult> Importer::run() {
  ImportResult result;
  Location fileLoc = FileLineColLoc::get(&context, o.path, 0, 0);
  result.module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(result.module->getBody());
  auto model = graph::ModelOp::create(b, fileLoc, modelNameOf(g, o));
  Block &block = model.getBody().emplaceBlock();
  b.setInsertionPointToEnd(&block);

  std::set<std::string> initNames, used;
  for (const Node &n : g.nodes)
    for (const std::string &in : n.inputs)
      used.insert(in);
  for (const ValueInfo &out : g.outputs)
    used.insert(out.name);
  s.forTraining = !o.forwardOnly;
  s.weights = &weights;
  if (failed(addInputs(initNames)) || failed(addInitializers(used)) ||
      failed(addNodes()) || failed(addOutputs(block)))
    return std::nullopt;
  if (failed(verify(*result.module)))
    return std::nullopt;
  result.weights = std::move(weights);
  result.notes = std::move(notes);
  return result;
}

} // namespace

std::optional<ImportResult> importGraph(MLIRContext &context, const Graph &g,
                                        const ImportOptions &options) {
  return Importer(context, g, options).run();
}

} // namespace ampc::onnx
