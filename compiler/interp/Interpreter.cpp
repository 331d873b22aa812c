//===- Interpreter.cpp - Walks graph IR, one kernel per op -----------------===//
#include "compiler/interp/Interpreter.h"

#include "compiler/interp/Kernel.h"
#include "dialects/Graph/GraphOps.h"
#include "runtime/numerics/Half.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace ampc::interp;

double ampc::interp::roundTo(double x, ElemType type, Numerics numerics) {
  if (numerics == Numerics::FP64)
    return x;
  switch (type) {
  case ElemType::F32:
    return double(num::roundToFloat(x));
  case ElemType::F16:
    return double(num::roundToHalf(x));
  case ElemType::BF16:
    return double(float(num::roundToBF16(x)));
  default:
    return x;
  }
}

void ampc::interp::roundTensor(Tensor &t, Numerics numerics) {
  if (!t.isFloat() || numerics == Numerics::FP64)
    return;
  for (double &x : t.f)
    x = roundTo(x, t.type, numerics);
}

const KernelTable &ampc::interp::kernelTable() {
  static const KernelTable table = [] {
    KernelTable t;
    registerElementwiseKernels(t);
    registerLinalgKernels(t);
    registerConvPoolKernels(t);
    registerNormalizationKernels(t);
    registerReductionKernels(t);
    registerShapeKernels(t);
    registerLossKernels(t);
    registerAttentionKernels(t);
    registerBatchNormKernels(t);
    registerLossIndexKernels(t);
    registerResampleKernels(t);
    registerConvTransposeKernels(t);
    return t;
  }();
  return table;
}

// Converts a bound value to the type |type| declares: shape must match, the
// element kind (float or integer) must match, floats are rounded.
static FailureOr<Tensor> bindValue(Operation *op, StringRef what,
                                   const Tensor &value, Type type,
                                   Numerics numerics) {
  Shape shape = shapeOf(type);
  ElemType et = elemTypeOf(type);
  if (value.shape != shape || value.isFloat() != isFloat(et))
    return op->emitError() << what << " needs a " << shapeToString(shape) << " "
                           << toString(et) << " tensor, got "
                           << shapeToString(value.shape) << " "
                           << toString(value.type);
  Tensor t = value;
  t.type = et;
  roundTensor(t, numerics);
  return t;
}

FailureOr<std::vector<Tensor>>
Interpreter::runOp(Operation *op, ArrayRef<Tensor> operands) {
  StringRef name = op->getName().getStringRef();
  const KernelTable &table = kernelTable();
  auto it = table.find(name);
  if (it == table.end())
    return op->emitError() << "the reference interpreter has no kernel for '"
                           << name << "'";
  OpContext ctx(op, options);
  KernelResult results = it->second(ctx, std::span<const Tensor>(
                                             operands.data(), operands.size()));
  if (failed(results))
    return failure();
  if (results->size() != op->getNumResults())
    return op->emitError() << "interpreter kernel for '" << name << "' made "
                           << results->size() << " results, the op has "
                           << op->getNumResults();
  for (auto [t, r] : llvm::zip(*results, op->getResults())) {
    Shape shape = shapeOf(r.getType());
    if (t.shape != shape || int64_t(t.isFloat() ? t.f.size() : t.i.size()) !=
                                t.size())
      return op->emitError()
             << "interpreter kernel for '" << name << "' made a "
             << shapeToString(t.shape) << " result, the op declares "
             << shapeToString(shape);
    t.type = elemTypeOf(r.getType());
    // An op computing in FP32 rounds its f16/bf16 result from FP32, as its
    // kernels do (and as an FP32 result and a narrowing cast did before
    // graph-absorb-casts removed the cast).
    if (t.isFloat() && t.type != ElemType::F32 && graph::computesInFP32(op) &&
        options.numerics != Numerics::FP64)
      for (double &x : t.f)
        x = roundTo(x, ElemType::F32, options.numerics);
    roundTensor(t, options.numerics);
  }
  return results;
}

LogicalResult Interpreter::runBlock(Block &block, Env &env,
                                    const NamedTensors *bindings,
                                    const Env *base, StringRef changed) {
  llvm::DenseSet<Value> dirty;
  for (Operation &op : block.without_terminator()) {
    if (base) {
      bool depends = llvm::any_of(op.getOperands(),
                                  [&](Value v) { return dirty.contains(v); });
      StringRef name;
      if (auto in = dyn_cast<graph::InputOp>(op))
        name = in.getName();
      else if (auto p = dyn_cast<graph::ParamOp>(op))
        name = p.getName();
      else if (auto buf = dyn_cast<graph::BufferOp>(op))
        name = buf.getName();
      if (!depends && name != changed) {
        for (Value v : op.getResults())
          env[v] = base->lookup(v);
        continue;
      }
      dirty.insert(op.getResults().begin(), op.getResults().end());
    }
    // A buffer nothing binds starts from its initializer (model state at
    // step 0: batch_norm's running statistics).
    if (auto buf = dyn_cast<graph::BufferOp>(op);
        buf && (!bindings || !bindings->count(buf.getName().str()))) {
      auto type = cast<RankedTensorType>(buf.getType());
      Tensor t(Shape(type.getShape().begin(), type.getShape().end()),
               ElemType::F32);
      double v = isa<graph::OnesInitAttr>(buf.getInit()) ? 1.0 : 0.0;
      if (auto c = dyn_cast<graph::ConstantInitAttr>(buf.getInit()))
        v = double(c.getValue());
      std::fill(t.f.begin(), t.f.end(), v);
      env[buf.getResult()] = std::move(t);
      continue;
    }
    if (bindings && isa<graph::InputOp, graph::ParamOp, graph::BufferOp>(op)) {
      StringRef name = isa<graph::InputOp>(op)
                           ? cast<graph::InputOp>(op).getName()
                       : isa<graph::ParamOp>(op)
                           ? cast<graph::ParamOp>(op).getName()
                           : cast<graph::BufferOp>(op).getName();
      auto it = bindings->find(name.str());
      if (it == bindings->end())
        return op.emitError() << "no value bound to '" << name << "'";
      FailureOr<Tensor> t = bindValue(&op, ("'" + name + "'").str(), it->second,
                                      op.getResult(0).getType(),
                                      options.numerics);
      if (failed(t))
        return failure();
      env[op.getResult(0)] = std::move(*t);
      continue;
    }
    std::vector<Tensor> operands;
    operands.reserve(op.getNumOperands());
    for (Value v : op.getOperands()) {
      auto it = env.find(v);
      if (it == env.end())
        return op.emitError() << "operand has no value (not in this block?)";
      operands.push_back(it->second);
    }
    FailureOr<std::vector<Tensor>> results = runOp(&op, operands);
    if (failed(results))
      return failure();
    for (auto [v, t] : llvm::zip(op.getResults(), *results))
      env[v] = std::move(t);
  }
  return success();
}

FailureOr<NamedTensors> Interpreter::runModel(graph::ModelOp model,
                                              const NamedTensors &bindings,
                                              ModelValues *keep) {
  Env env;
  if (failed(runBlock(model.getBlock(), env, &bindings)))
    return failure();
  FailureOr<NamedTensors> outs = outputsOf(model, env);
  if (keep)
    keep->values = std::move(env);
  return outs;
}

FailureOr<NamedTensors> Interpreter::rerunModel(graph::ModelOp model,
                                                const NamedTensors &bindings,
                                                const ModelValues &base,
                                                StringRef changed) {
  Env env;
  if (failed(runBlock(model.getBlock(), env, &bindings, &base.values, changed)))
    return failure();
  return outputsOf(model, env);
}

FailureOr<NamedTensors> Interpreter::outputsOf(graph::ModelOp model,
                                               Env &env) {
  graph::OutputOp output = model.getOutputOp();
  NamedTensors outs;
  for (auto [name, v] : llvm::zip(output.getNames(), output.getValues()))
    outs[cast<StringAttr>(name).str()] = env[v];
  return outs;
}

FailureOr<std::vector<Tensor>>
Interpreter::runFunction(func::FuncOp func, ArrayRef<Tensor> args,
                         ModelValues *keep) {
  if (func.isExternal())
    return func.emitError() << "cannot interpret a function without a body";
  Block &block = func.getBody().front();
  if (args.size() != block.getNumArguments())
    return func.emitError() << "takes " << block.getNumArguments()
                            << " arguments, got " << args.size();
  Env env;
  for (auto [k, arg] : llvm::enumerate(block.getArguments())) {
    FailureOr<Tensor> t =
        bindValue(func, ("argument #" + Twine(k)).str(), args[k],
                  arg.getType(), options.numerics);
    if (failed(t))
      return failure();
    env[arg] = std::move(*t);
  }
  if (failed(runBlock(block, env, nullptr)))
    return failure();
  Operation *ret = block.getTerminator();
  if (!isa<func::ReturnOp>(ret))
    return ret->emitError() << "expected func.return";
  std::vector<Tensor> results;
  for (Value v : ret->getOperands()) {
    auto it = env.find(v);
    if (it == env.end())
      return ret->emitError() << "returned value has no value";
    results.push_back(it->second);
  }
  if (keep)
    keep->values = std::move(env);
  return results;
}
