//===- GraphGemmGelu.cpp - linear_gelu, matmul_gelu_backward: verifiers ---===//
//
// Both ops are a GEMM with a GELU epilogue that graph-fuse-gemm-gelu writes;
// the verifiers check them against the linear / matmul they replace, so a
// malformed fusion fails here rather than in a kernel.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

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
  auto l = tensorOf(getLhs()), r = tensorOf(getRhs());
  auto p = tensorOf(getPreactivation()), c = tensorOf(getResult());
  if (l.getRank() != 2 || r.getRank() != 2)
    return emitOpError() << "operands must be 2-D, got "
                         << shapeStr(l.getShape()) << " and "
                         << shapeStr(r.getShape());
  Type e = l.getElementType();
  if (r.getElementType() != e || p.getElementType() != e ||
      c.getElementType() != e)
    return emitOpError() << "operands and result must share one element "
                            "type, got "
                         << l << ", " << r << ", " << p << " -> " << c;
  bool ta = getLhsTransposed(), tb = getRhsTransposed();
  int64_t m = l.getDimSize(ta ? 1 : 0), k = l.getDimSize(ta ? 0 : 1);
  int64_t rk = r.getDimSize(tb ? 1 : 0), n = r.getDimSize(tb ? 0 : 1);
  if (k != rk)
    return emitOpError() << "reduction dimensions differ: lhs K = " << k
                         << ", rhs K = " << rk;
  if (c.getShape() != ArrayRef<int64_t>{m, n} ||
      p.getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError() << "result and preactivation must be "
                         << shapeStr({m, n}) << ", got "
                         << shapeStr(c.getShape()) << " and "
                         << shapeStr(p.getShape());
  return success();
}
