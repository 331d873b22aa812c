//===- GraphPadClasses.cpp - An LM head's class count padded to 16 bytes --===//
//
// GPT-2's vocabulary has 50257 classes: the logits' rows, the LM head's
// dX GEMM (K = 50257) and its dW GEMM (the transposed dlogits) all have a
// leading dimension of 50257 half elements, which is not a multiple of 16
// bytes, so cuBLASLt cannot use its TMA kernels for the three largest
// GEMMs of the step, and no row of the logits starts 16-byte aligned.
// nanoGPT and llm.c pad the vocabulary of the model itself; this pass
// pads the step instead, leaving the model, its parameters and its
// checkpoints as written: the weight gets zero rows, the logits a bias of
// 0 and -inf (exp(-inf) = 0, so the loss and every real class's gradient
// are the same sums, with exact zeros added: equal up to the order the
// libraries sum in, e.g. CUDA's 16-byte packs of aligned rows; a padded
// class's gradient is exactly 0), and the weight gradient is the first rows
// of the padded one (a leading slice: an alias, no copy;
// passes/ValueAliases.h).
//
// Under AMP the weight is the half copy the epilogue keeps (an argument
// {graph.param_copy}, train-half-weight-copies). Padding it would copy 77
// MB per step for GPT-2; instead the argument takes the padded type: the
// runtime allocates the zero rows after the copy, zeroed once and never
// written (rt::ParamInfo::halfPadding), so the padded weight is the copy.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "passes/Passes.h"
#include "passes/ValueAliases.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHPADCLASSES
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc::graph;

namespace {

// |t| with dimension |dim| (negative: from the back) of size |size|.
RankedTensorType resized(Type t, int64_t dim, int64_t size) {
  auto r = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(r.getShape());
  shape[dim < 0 ? dim + r.getRank() : dim] = size;
  return RankedTensorType::get(shape, r.getElementType());
}

// The first rows of |full| as |rows| (a leading slice: an alias).
Value firstRows(OpBuilder &b, Location loc, RankedTensorType rows, Value full) {
  return SliceOp::create(
      b, loc, rows, full,
      b.getDenseI64ArrayAttr(SmallVector<int64_t>(rows.getRank(), 0)),
      b.getDenseI64ArrayAttr(rows.getShape()), nullptr, nullptr);
}

bool isMatrix(Value v) { return cast<RankedTensorType>(v.getType()).getRank() == 2; }

// True when every use of the dlogits |d| (through reshapes that keep the
// class axis last) is one this pass rewrites: dX = d W with |w| the
// head's weight, or dW = d^T X.
bool rewritable(Value d, Value w, int64_t classes) {
  for (Operation *user : d.getUsers()) {
    if (auto r = dyn_cast<ReshapeOp>(user)) {
      if (cast<RankedTensorType>(r.getType()).getShape().back() != classes ||
          !rewritable(r.getResult(), w, classes))
        return false;
      continue;
    }
    auto m = dyn_cast<MatmulOp>(user);
    if (!m || m.getLhs() != d || m.getRhs() == d || !isMatrix(d) ||
        m.getRhsTransposed())
      return false;
    if (!m.getLhsTransposed() && m.getRhs() != w)
      return false;
  }
  return true;
}

// Moves the uses of |d| onto the padded |dp|.
void rewire(Value d, Value dp, Value wp) {
  int64_t padded = cast<RankedTensorType>(dp.getType()).getShape().back();
  for (Operation *user : llvm::make_early_inc_range(d.getUsers())) {
    if (auto r = dyn_cast<ReshapeOp>(user)) {
      OpBuilder b(r);
      auto rp = ReshapeOp::create(b, r.getLoc(), resized(r.getType(), -1, padded), dp);
      rewire(r.getResult(), rp.getResult(), wp);
      r->erase();
      continue;
    }
    auto m = cast<MatmulOp>(user);
    m->setOperand(0, dp);
    if (!m.getLhsTransposed()) { // dX: K grows by zero columns times zero rows
      m->setOperand(1, wp);
      continue;
    }
    // dW: the padded classes' rows are zero; the gradient is the first rows.
    auto dw = cast<RankedTensorType>(m.getResult().getType());
    m.getResult().setType(resized(dw, 0, padded));
    OpBuilder b(m->getBlock(), std::next(m->getIterator()));
    Value slice = firstRows(b, m.getLoc(), dw, m.getResult());
    m.getResult().replaceAllUsesExcept(slice, slice.getDefiningOp());
  }
}

// |pad| gives a half weight copy zero rows: the copy's argument becomes the
// padded weight (see the file comment); other readers get its first rows.
void padInPlace(SliceBackwardOp pad) {
  auto copy = dyn_cast<BlockArgument>(pad.getG());
  auto fn = copy ? dyn_cast<func::FuncOp>(copy.getOwner()->getParentOp())
                 : func::FuncOp();
  if (!fn || !fn.getArgAttr(copy.getArgNumber(), kParamCopyAttr) ||
      !ampc::isLeadingRows(pad, pad.getType()))
    return;
  SmallVector<OpOperand *> others;
  for (OpOperand &use : copy.getUses())
    if (use.getOwner() != pad)
      others.push_back(&use);
  auto type = cast<RankedTensorType>(copy.getType());
  copy.setType(pad.getType());
  SmallVector<Type> inputs(fn.getArgumentTypes());
  inputs[copy.getArgNumber()] = pad.getType();
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
  pad.getResult().replaceAllUsesWith(copy);
  pad->erase();
  if (others.empty())
    return;
  auto b = OpBuilder::atBlockBegin(copy.getOwner());
  Value rows = firstRows(b, copy.getLoc(), type, copy);
  for (OpOperand *use : others)
    use->set(rows);
}

// linear(x, W) -> cross_entropy_with_grad, W [V, C] with V elements of the
// logits' type not a multiple of 16 bytes.
void pad(CrossEntropyWithGradOp ce) {
  auto head = ce.getLogits().getDefiningOp<LinearOp>();
  if (!head || head.getBias() || !ce.getLogits().hasOneUse() ||
      !ce.getLabelSmoothing().isZero() || !isMatrix(head.getWeight()))
    return;
  auto logits = cast<RankedTensorType>(ce.getLogits().getType());
  Type elem = logits.getElementType();
  int64_t classes = logits.getShape().back();
  if (ShapedType::isDynamic(classes))
    return;
  int64_t per = 128 / elem.getIntOrFloatBitWidth(); // elements in 16 bytes
  int64_t padded = (classes + per - 1) / per * per;
  Value w = head.getWeight();
  if (padded == classes || !rewritable(ce.getDlogits(), w, classes))
    return;

  OpBuilder b(head);
  Location loc = head.getLoc();
  int64_t cols = cast<RankedTensorType>(w.getType()).getShape().back();
  // W with zero rows below: the slice_backward of the slice W would be.
  auto wp = SliceBackwardOp::create(b, loc, resized(w.getType(), 0, padded), w,
                                    b.getDenseI64ArrayAttr({0, 0}),
                                    b.getDenseI64ArrayAttr({classes, cols}),
                                    nullptr, nullptr);
  // The bias: 0 for the classes, -inf for the padding.
  auto tail = RankedTensorType::get({padded - classes}, elem);
  auto ninf = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          tail, b.getFloatAttr(elem, -std::numeric_limits<double>::infinity())));
  auto bias = SliceBackwardOp::create(
      b, loc, RankedTensorType::get({padded}, elem), ninf,
      b.getDenseI64ArrayAttr({classes}), b.getDenseI64ArrayAttr({padded}),
      nullptr, nullptr);
  auto lp = LinearOp::create(b, loc, resized(logits, -1, padded), head.getInput(),
                             wp.getResult(), bias.getResult());
  for (NamedAttribute a : head->getDiscardableAttrs())
    lp->setAttr(a.getName(), a.getValue());

  b.setInsertionPoint(ce);
  auto cep = CrossEntropyWithGradOp::create(
      b, ce.getLoc(),
      TypeRange{ce.getLoss().getType(),
                resized(ce.getDlogits().getType(), -1, padded)},
      ValueRange{lp.getResult(), ce.getLabels(), ce.getG()}, ce->getAttrs());
  ce.getLoss().replaceAllUsesWith(cep.getLoss());
  rewire(ce.getDlogits(), cep.getDlogits(), wp.getResult());
  ce->erase();
  head->erase();
  padInPlace(wp);
}

struct GraphPadClassesPass
    : ampc::impl::GraphPadClassesBase<GraphPadClassesPass> {
  void runOnOperation() override {
    SmallVector<CrossEntropyWithGradOp> ces;
    getOperation()->walk([&](CrossEntropyWithGradOp c) { ces.push_back(c); });
    for (CrossEntropyWithGradOp c : ces)
      pad(c);
  }
};

} // namespace
