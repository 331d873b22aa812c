//===- Linear.cpp - MatMul(x, Transpose(W)) + b -> graph.linear -----------===//
//
// The TorchScript exporter writes nn.Linear on a 3-D input (a transformer's
// [B, T, D]) as Transpose(weight) -> MatMul -> Add(bias) instead of Gemm.
// Imported one by one that is a transpose, reshape + matmul + reshape and a
// broadcast add; graph.linear is what hand-written models use and what the
// kernels fuse (the bias as a GEMM epilogue). Both steps check the graph
// ops already emitted, so they apply whatever produced them.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

bool isOp(Value v, StringRef name) {
  Operation *op = v.getDefiningOp();
  return op && op->getName().getStringRef() == name;
}

} // namespace

// MatMul(x [..., K], Transpose(W [N, K])) with the transpose read only here.
FailureOr<bool> importLinear(ImportState &s) {
  const Node &n = *s.node;
  if (n.opType != "MatMul" || n.inputs.size() != 2 || s.constant(n.inputs[0]) ||
      s.constant(n.inputs[1]) || s.usesOf(n.inputs[1]) != 1)
    return false;
  FailureOr<Value> x = s.input(0), wT = s.input(1);
  if (failed(x) || failed(wT))
    return failure();
  if (!isOp(*wT, "graph.transpose") || shapeOf(*wT).size() != 2 ||
      shapeOf(*x).size() < 2)
    return false;
  auto perm = wT->getDefiningOp()->getAttrOfType<DenseI64ArrayAttr>("perm");
  if (!perm || perm.asArrayRef() != ArrayRef<int64_t>{1, 0})
    return false;
  Value w = wT->getDefiningOp()->getOperand(0);
  FailureOr<Value> r = s.emit("graph.linear", {*x, w});
  if (failed(r))
    return failure();
  s.result(0, *r);
  s.eraseUnused({n.inputs[1]});
  return true;
}

// Add(b [N], linear(x, W)) (either order) with the linear read only here.
FailureOr<bool> importLinearBias(ImportState &s) {
  const Node &n = *s.node;
  if (n.opType != "Add" || n.inputs.size() != 2)
    return false;
  for (int k = 0; k < 2; ++k) {
    const std::string &y = n.inputs[k], &b = n.inputs[1 - k];
    if (s.constant(y) || s.usesOf(y) != 1 || !s.has(y) || !s.has(b))
      continue;
    FailureOr<Value> yv = s.get(y);
    if (failed(yv) || !isOp(*yv, "graph.linear") ||
        yv->getDefiningOp()->getNumOperands() != 2)
      continue;
    FailureOr<Value> bv = s.get(b);
    if (failed(bv))
      return failure();
    if (shapeOf(*bv).size() != 1 || shapeOf(*bv)[0] != shapeOf(*yv).back() ||
        elementTypeOf(*bv) != elementTypeOf(*yv))
      continue;
    Operation *lin = yv->getDefiningOp();
    OperationState st(lin->getLoc(), "graph.linear");
    st.addOperands({lin->getOperand(0), lin->getOperand(1), *bv});
    st.addTypes(yv->getType());
    Value r = s.b.create(st)->getResult(0);
    s.result(0, r);
    s.eraseUnused({y});
    return true;
  }
  return false;
}

} // namespace ampc::onnx
