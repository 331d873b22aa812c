//===- GraphAutodiff.cpp - Reverse-mode autodiff of a graph.model ---------===//
//
// Builds `func.func @<model>_grad`: the model's forward ops cloned into a
// function, then one reverse sweep asking each op for its VJP
// (VJPOpInterface). The per-op math lives with the ops, in
// dialects/Graph/vjp/; this file only does the bookkeeping.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHAUTODIFF
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// Gives every graph.dropout lacking a `key` a fresh one, above all existing
// keys, in walk order (so the numbering is deterministic).
void assignDropoutKeys(ModuleOp module) {
  int64_t next = 0;
  module.walk([&](DropoutOp op) {
    if (auto key = op.getKey())
      next = std::max(next, int64_t(*key) + 1);
  });
  Builder b(module.getContext());
  module.walk([&](DropoutOp op) {
    if (!op.getKey())
      op.setKeyAttr(b.getI64IntegerAttr(next++));
  });
}

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

class GradBuilder {
public:
  explicit GradBuilder(ModelOp model) : model(model) {}
  LogicalResult build();

private:
  // Adds |g| to the cotangent of |v| (a use of |v| contributed |g|).
  void accumulate(OpBuilder &b, Value v, Value g);

  ModelOp model;
  DenseMap<Value, Value> cotangents;
};

LogicalResult GradBuilder::build() {
  MLIRContext *ctx = model.getContext();
  SmallVector<InputOp> inputs;
  SmallVector<ParamOp> params;
  SmallVector<BufferOp> buffers;
  for (Operation &op : model.getBlock()) {
    if (auto in = dyn_cast<InputOp>(op))
      inputs.push_back(in);
    else if (auto p = dyn_cast<ParamOp>(op))
      params.push_back(p);
    else if (auto buf = dyn_cast<BufferOp>(op))
      buffers.push_back(buf);
  }
  OutputOp output = model.getOutputOp();
  Value loss = output.getLoss();
  if (!loss)
    return output.emitOpError() << "names no loss to differentiate";

  // Outputs in order, the loss moved first.
  SmallVector<std::pair<StringAttr, Value>> outputs;
  for (auto [name, value] : llvm::zip(output.getNames(), output.getValues()))
    if (value == loss && cast<StringAttr>(name).getValue() == "loss")
      outputs.insert(outputs.begin(), {cast<StringAttr>(name), value});
    else
      outputs.push_back({cast<StringAttr>(name), value});

  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
  SmallVector<Type> argTypes, resultTypes;
  for (InputOp in : inputs)
    argTypes.push_back(in.getType());
  for (ParamOp p : params)
    argTypes.push_back(p.getType());
  argTypes.push_back(f32Scalar);
  // Model state (batch_norm's running statistics) last: no gradient.
  for (BufferOp buf : buffers)
    argTypes.push_back(buf.getType());
  for (auto &out : outputs)
    resultTypes.push_back(out.second.getType());
  for (ParamOp p : params)
    resultTypes.push_back(p.getType());

  std::string name = (model.getSymName() + "_grad").str();
  auto module = model->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return model.emitOpError() << "cannot add @" << name
                               << ": the symbol already exists";
  OpBuilder b(ctx);
  b.setInsertionPointAfter(model);
  auto fn = func::FuncOp::create(b, model.getLoc(), name,
                                 FunctionType::get(ctx, argTypes, resultTypes));
  // All argument and result attributes at once: setArgAttr rebuilds (and
  // uniques, for good) the whole array per call, quadratic in time and memory.
  auto dict = [&](StringRef key, Attribute value) -> Attribute {
    return DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, key), value)});
  };
  SmallVector<Attribute> argAttrs, resultAttrs;
  for (InputOp in : inputs)
    argAttrs.push_back(dict(kInputAttr, in.getNameAttr()));
  for (ParamOp p : params)
    argAttrs.push_back(dict(kParamAttr, p.getNameAttr()));
  argAttrs.push_back(dict(kLossScaleAttr, UnitAttr::get(ctx)));
  for (BufferOp buf : buffers)
    argAttrs.push_back(dict(kBufferAttr, buf.getNameAttr()));
  for (auto &out : outputs)
    resultAttrs.push_back(dict(kOutputAttr, out.first));
  for (ParamOp p : params)
    resultAttrs.push_back(dict(kGradAttr, p.getNameAttr()));
  fn.setAllArgAttrs(argAttrs);
  fn.setAllResultAttrs(resultAttrs);

  // Forward: the model body with inputs and parameters as arguments.
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  for (auto [i, in] : llvm::enumerate(inputs))
    map.map(in.getResult(), entry->getArgument(i));
  for (auto [i, p] : llvm::enumerate(params))
    map.map(p.getResult(), entry->getArgument(inputs.size() + i));
  for (auto [i, buf] : llvm::enumerate(buffers))
    map.map(buf.getResult(),
            entry->getArgument(inputs.size() + params.size() + 1 + i));
  b.setInsertionPointToEnd(entry);
  SmallVector<Operation *> forward;
  for (Operation &op : model.getBlock()) {
    if (isa<InputOp, ParamOp, BufferOp, OutputOp>(op))
      continue;
    forward.push_back(b.clone(op, map));
  }

  // Active values: float values that depend on a parameter and that the
  // loss depends on. Only they get cotangents.
  DenseSet<Value> varied, useful;
  for (unsigned i = 0; i < params.size(); ++i)
    varied.insert(entry->getArgument(inputs.size() + i));
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value r : op->getResults())
        if (isFloatTensor(r))
          varied.insert(r);
  Value fwdLoss = map.lookup(loss);
  useful.insert(fwdLoss);
  for (Operation *op : llvm::reverse(forward))
    if (llvm::any_of(op->getResults(),
                     [&](Value v) { return useful.contains(v); }))
      useful.insert(op->getOperands().begin(), op->getOperands().end());
  auto active = [&](Value v) {
    return isFloatTensor(v) && varied.contains(v) && useful.contains(v);
  };

  // Seed: d(loss * scale)/d(loss) = scale, in the loss's element type.
  Value seed = entry->getArgument(inputs.size() + params.size());
  if (fwdLoss.getType() != seed.getType())
    seed = CastOp::create(b, fwdLoss.getLoc(), fwdLoss.getType(), seed);
  if (active(fwdLoss))
    cotangents[fwdLoss] = seed;

  // Reverse sweep.
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultCts;
    bool any = false;
    for (Value r : op->getResults()) {
      resultCts.push_back(cotangents.lookup(r));
      any |= bool(resultCts.back());
    }
    if (!any || llvm::none_of(op->getOperands(), active))
      continue;
    auto vjp = dyn_cast<VJPOpInterface>(op);
    if (!vjp)
      return op->emitOpError()
             << "is not differentiable (it implements no VJPOpInterface), "
                "but the loss depends on it through a parameter";
    SmallVector<Value> operandCts = vjp.buildVJP(b, resultCts);
    if (operandCts.size() != op->getNumOperands())
      return op->emitOpError() << "VJP returned " << operandCts.size()
                               << " cotangents for " << op->getNumOperands()
                               << " operands";
    for (auto [operand, ct] : llvm::zip(op->getOperands(), operandCts)) {
      if (!ct || !active(operand))
        continue;
      if (ct.getType() != operand.getType())
        return op->emitOpError() << "VJP gave a cotangent of type "
                                 << ct.getType() << " for an operand of type "
                                 << operand.getType();
      accumulate(b, operand, ct);
    }
  }

  SmallVector<Value> results;
  for (auto &out : outputs)
    results.push_back(map.lookup(out.second));
  for (auto [i, p] : llvm::enumerate(params)) {
    Value grad = cotangents.lookup(entry->getArgument(inputs.size() + i));
    auto type = cast<RankedTensorType>(p.getType());
    if (!grad)
      grad = ConstantOp::create(
          b, p.getLoc(),
          DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(),
                                                      0.0)));
    results.push_back(grad);
  }
  func::ReturnOp::create(b, output.getLoc(), results);

  // VJPs build cotangents for every operand; drop those nobody needed.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

void GradBuilder::accumulate(OpBuilder &b, Value v, Value g) {
  Value &slot = cotangents[v];
  slot = slot ? AddOp::create(b, g.getLoc(), slot, g).getResult() : g;
}

struct GraphAutodiffPass : ampc::impl::GraphAutodiffBase<GraphAutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    assignDropoutKeys(module);
    for (ModelOp model : llvm::to_vector(module.getOps<ModelOp>()))
      if (failed(GradBuilder(model).build()))
        return signalPassFailure();
  }
};

} // namespace
