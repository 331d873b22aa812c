//===- EmitGradResults.cpp - Where each gradient leaves the step ----------===//
#include "compiler/targets/common/EmitGradResults.h"
#include "compiler/targets/common/EmitModel.h"
#include "passes/GradReady.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;

LogicalResult ampc::emit::emitGradBodyAndResults(
    const Program &p, BlockEnv &env, raw_indented_ostream &os,
    function_ref<LogicalResult()> emitBody, StringRef resultsComment,
    function_ref<void(Value)> printLoss) {
  func::FuncOp fn = p.grad;
  Block &body = fn.getBody().front();
  // storeGrad copies as many elements as the parameter has.
  SmallVector<int64_t> paramSizes;
  graph::ModelOp model = p.model;
  for (auto param : model.getBlock().getOps<graph::ParamOp>())
    paramSizes.push_back(
        cast<RankedTensorType>(param.getType()).getNumElements());
  LogicalResult sizes = success();
  Value loss;
  SmallVector<std::function<void()>> atEnd;
  DenseMap<Value, Operation *> touch;
  auto grad = [&](Value v, size_t idx, int64_t count, StringRef name) {
    if (count != paramSizes[idx])
      sizes = fn.emitError() << "the gradient of " << name << " has " << count
                             << " elements, the parameter " << paramSizes[idx];
    std::function<void()> print = [&os, &env, v, idx, name = name.str()] {
      os << "storeGrad(" << idx << ", " << env[v] << ", micro);  // "
         << commentText(name) << "\n";
      os << "gradReady(" << idx << ");  // final: its all-reduce may start\n";
    };
    // Once per value: gradients may share one (a zero constant for unused
    // parameters, returned by as many results).
    auto [it, fresh] = touch.try_emplace(v, nullptr);
    if (fresh)
      it->second = lastTouch(v, body);
    if (Operation *op = it->second)
      env.after[op].push_back(std::move(print));
    else
      atEnd.push_back(std::move(print));
  };
  if (failed(forEachGradResult(p, [&](Value v) { loss = v; }, grad)) ||
      failed(sizes) || failed(emitBody()))
    return failure();
  os << "\n" << resultsComment << "\n";
  printLoss(loss);
  for (auto &print : atEnd)
    print();
  return success();
}
