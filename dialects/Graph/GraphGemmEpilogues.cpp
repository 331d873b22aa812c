//===- GraphGemmEpilogues.cpp - GEMMs with an epilogue: verifiers ---------===//
//
// matmul_bias_grad (the lhs summed over K), linear_gelu and
// matmul_gelu_backward (the tanh GELU, or its derivative, on the
// accumulator) are written by fusion passes; the verifiers check them
// against the GEMM and the op they replace, so a malformed fusion fails here
// rather than in a kernel.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {

// A 2-D `op(lhs) op(rhs)` (the transpose flags) whose operands and
// |others| share one element type: its [M, N], or failure (reported).
FailureOr<std::pair<int64_t, int64_t>>
verifyGemm2d(Operation *op, Value lhs, Value rhs, bool ta, bool tb,
             ValueRange others) {
  auto l = tensorOf(lhs), r = tensorOf(rhs);
  if (l.getRank() != 2 || r.getRank() != 2)
    return op->emitOpError() << "operands must be 2-D, got "
                             << shapeStr(l.getShape()) << " and "
                             << shapeStr(r.getShape());
  Type e = l.getElementType();
  if (r.getElementType() != e ||
      llvm::any_of(others, [&](Value v) {
        return tensorOf(v).getElementType() != e;
      })) {
    InFlightDiagnostic d = op->emitOpError()
                           << "operands and results must share one element "
                              "type, got "
                           << l << ", " << r;
    for (Value v : others)
      d << ", " << v.getType();
    return d;
  }
  int64_t m = l.getDimSize(ta ? 1 : 0), k = l.getDimSize(ta ? 0 : 1);
  int64_t rk = r.getDimSize(tb ? 1 : 0), n = r.getDimSize(tb ? 0 : 1);
  if (k != rk)
    return op->emitOpError() << "reduction dimensions differ: lhs K = " << k
                             << ", rhs K = " << rk;
  return std::make_pair(m, n);
}

} // namespace

LogicalResult MatmulBiasGradOp::verify() {
  auto mn = verifyGemm2d(*this, getLhs(), getRhs(), getLhsTransposed(),
                         getRhsTransposed(), {getResult(), getBiasGrad()});
  if (failed(mn))
    return failure();
  auto [m, n] = *mn;
  auto c = tensorOf(getResult()), b = tensorOf(getBiasGrad());
  if (c.getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError() << "result must be " << shapeStr({m, n}) << ", got "
                         << shapeStr(c.getShape());
  if (b.getShape() != ArrayRef<int64_t>{m})
    return emitOpError() << "bias_grad (the lhs summed over K) must be "
                         << shapeStr({m}) << ", got "
                         << shapeStr(b.getShape());
  return success();
}

LogicalResult LinearGeluOp::verify() {
  auto x = tensorOf(getInput()), w = tensorOf(getWeight());
  auto y = tensorOf(getResult()), z = tensorOf(getPreactivation());
  Type e = x.getElementType();
  bool sameType = w.getElementType() == e && y.getElementType() == e &&
                  z.getElementType() == e;
  if (getBias())
    sameType &= tensorOf(getBias()).getElementType() == e;
  if (!sameType)
    return emitOpError() << "operands and results must share one element "
                            "type";
  if (x.getRank() < 1 || w.getRank() != 2 ||
      x.getShape().back() != w.getDimSize(1))
    return emitOpError() << "input [..., K] and weight [N, K] expected, got "
                         << shapeStr(x.getShape()) << " and "
                         << shapeStr(w.getShape());
  int64_t n = w.getDimSize(0);
  if (getBias() && tensorOf(getBias()).getShape() != ArrayRef<int64_t>{n})
    return emitOpError() << "bias must be " << shapeStr({n}) << ", got "
                         << shapeStr(tensorOf(getBias()).getShape());
  SmallVector<int64_t> want(x.getShape());
  want.back() = n;
  if (y.getShape() != ArrayRef<int64_t>(want) ||
      z.getShape() != ArrayRef<int64_t>(want))
    return emitOpError() << "result and preactivation must be "
                         << shapeStr(want) << ", got "
                         << shapeStr(y.getShape()) << " and "
                         << shapeStr(z.getShape());
  return success();
}

LogicalResult MatmulGeluBackwardOp::verify() {
  auto mn = verifyGemm2d(*this, getLhs(), getRhs(), getLhsTransposed(),
                         getRhsTransposed(),
                         {getPreactivation(), getResult()});
  if (failed(mn))
    return failure();
  auto [m, n] = *mn;
  auto p = tensorOf(getPreactivation()), c = tensorOf(getResult());
  if (c.getShape() != ArrayRef<int64_t>{m, n} ||
      p.getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError() << "result and preactivation must be "
                         << shapeStr({m, n}) << ", got "
                         << shapeStr(c.getShape()) << " and "
                         << shapeStr(p.getShape());
  return success();
}
