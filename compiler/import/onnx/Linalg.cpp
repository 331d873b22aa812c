//===- Linalg.cpp - Gemm and MatMul
//-----------------------------------------===//
#include "compiler/import/onnx/ImportState.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace ampc::onnx {
namespace {

FailureOr<Value> transpose2d(ImportState &s, Value x) {
  return s.emit("graph.transpose", {x},
                {s.attr("perm", s.b.getDenseI64ArrayAttr({1, 0}))});
}

FailureOr<Value> scale(ImportState &s, Value x, double factor) {
  if (factor == 1.0)
    return x;
  auto type = RankedTensorType::get({}, elementTypeOf(x));
  OperationState st(s.loc(), "graph.constant");
  st.addAttribute("value", DenseElementsAttr::get(
                               type, FloatAttr::get(elementTypeOf(x), factor)));
  st.addTypes(type);
  Value c = s.b.create(st)->getResult(0);
  return s.emit("graph.mul", {x, c});
}

// Y = alpha * A' B' + beta * C; with transB (PyTorch's nn.Linear export)
// and a [N] bias this is graph.linear.
LogicalResult gemm(ImportState &s) {
  if (failed(s.onlyAttrs({"alpha", "beta", "transA", "transB"})))
    return failure();
  double alpha = s.floatAttr("alpha", 1.0), beta = s.floatAttr("beta", 1.0);
  bool transA = s.intAttr("transA", 0), transB = s.intAttr("transB", 0);
  FailureOr<Value> a = s.input(0), bv = s.input(1);
  if (failed(a) || failed(bv))
    return failure();
  if (shapeOf(*a).size() != 2 || shapeOf(*bv).size() != 2)
    return s.error("A and B must be 2-D");
  if (transA) {
    a = transpose2d(s, *a);
    if (failed(a))
      return failure();
  }
  std::optional<Value> c;
  if (s.hasInput(2)) {
    FailureOr<Value> cv = s.input(2);
    if (failed(cv))
      return failure();
    c = *cv;
  }
  int64_t n = transB ? shapeOf(*bv)[0] : shapeOf(*bv)[1];
  FailureOr<Value> y = failure();
  bool biasInLinear = c && alpha == 1.0 && beta == 1.0 && transB &&
                      shapeOf(*c).size() == 1 && shapeOf(*c)[0] == n;
  if (transB) {
    SmallVector<Value> ops = {*a, *bv};
    if (biasInLinear)
      ops.push_back(*c);
    y = s.emit("graph.linear", ops);
  } else {
    y = s.emit("graph.matmul", {*a, *bv});
  }
  if (failed(y) || failed(y = scale(s, *y, alpha)))
    return failure();
  if (c && !biasInLinear && beta != 0.0) {
    FailureOr<Value> bc = scale(s, *c, beta);
    if (failed(bc) || failed(y = s.emit("graph.add", {*y, *bc})))
      return failure();
  }
  s.result(0, *y);
  return success();
}

LogicalResult matmul(ImportState &s) {
  if (failed(s.onlyAttrs({})))
    return failure();
  FailureOr<Value> a = s.input(0), b = s.input(1);
  if (failed(a) || failed(b))
    return failure();
  ArrayRef<int64_t> sa = shapeOf(*a), sb = shapeOf(*b);
  FailureOr<Value> y = failure();
  if (sa.size() == 2 && sb.size() == 2) {
    y = s.emit("graph.matmul", {*a, *b});
  } else if (sa.size() > 2 && sb.size() == 2) {
    // [..., K] x [K, N]: one matmul over the flattened leading dims.
    int64_t rows = 1;
    for (int64_t d : sa.drop_back())
      rows *= d;
    SmallVector<int64_t> out(sa.drop_back());
    out.push_back(sb[1]);
    FailureOr<Value> flat = reshapeTo(s, *a, {rows, sa.back()});
    if (failed(flat) || failed(y = s.emit("graph.matmul", {*flat, *b})) ||
        failed(y = reshapeTo(s, *y, out)))
      return failure();
  } else if (sa.size() > 2 && sa.size() == sb.size() &&
             sa.drop_back(2) == sb.drop_back(2)) {
    y = s.emit("graph.batch_matmul", {*a, *b});
  } else {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << "operand shapes [";
    llvm::interleaveComma(sa, os);
    os << "] x [";
    llvm::interleaveComma(sb, os);
    os << "] are not supported (2-D x 2-D, N-D x 2-D, or N-D x N-D with "
          "equal batch dimensions)";
    return s.error(msg);
  }
  if (failed(y))
    return failure();
  s.result(0, *y);
  return success();
}

} // namespace

void registerLinalgOps(OpTable &t) {
  t["Gemm"] = gemm;
  t["MatMul"] = matmul;
}

} // namespace ampc::onnx
