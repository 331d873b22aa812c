//===- GraphMatmulBiasGrad.cpp - matmul_bias_grad: verifier ---------------===//
//
// The op is a 2-D graph.matmul plus the sum of its lhs over K; the verifier
// checks both results against those rules, so a malformed fusion fails here
// rather than in a kernel.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeText.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

LogicalResult MatmulBiasGradOp::verify() {
  auto l = tensorOf(getLhs()), r = tensorOf(getRhs());
  auto c = tensorOf(getResult()), b = tensorOf(getBiasGrad());
  if (l.getRank() != 2 || r.getRank() != 2)
    return emitOpError() << "operands must be 2-D, got "
                         << shapeStr(l.getShape()) << " and "
                         << shapeStr(r.getShape());
  Type e = l.getElementType();
  if (r.getElementType() != e || c.getElementType() != e ||
      b.getElementType() != e)
    return emitOpError() << "operands and results must share one element "
                            "type, got "
                         << l << ", " << r << " -> " << c << ", " << b;
  bool ta = getLhsTransposed(), tb = getRhsTransposed();
  int64_t m = l.getDimSize(ta ? 1 : 0), k = l.getDimSize(ta ? 0 : 1);
  int64_t rk = r.getDimSize(tb ? 1 : 0), n = r.getDimSize(tb ? 0 : 1);
  if (k != rk)
    return emitOpError() << "reduction dimensions differ: lhs K = " << k
                         << ", rhs K = " << rk;
  if (c.getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError() << "result must be " << shapeStr({m, n}) << ", got "
                         << shapeStr(c.getShape());
  if (b.getShape() != ArrayRef<int64_t>{m})
    return emitOpError() << "bias_grad (the lhs summed over K) must be "
                         << shapeStr({m}) << ", got "
                         << shapeStr(b.getShape());
  return success();
}
