//===- Flops.cpp ---------------------------------------------------------===//
#include "compiler/amp/Flops.h"

#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc::graph;

static double numel(Value v) {
  return double(cast<RankedTensorType>(v.getType()).getNumElements());
}

static ArrayRef<int64_t> shape(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

// Attention over q [B, H, T, D], k [B, Hkv, S, D], v [B, Hkv, S, E]: q k^T,
// scale + softmax (~5 per score), p v.
static double attentionFlops(Value query, Value key, Value value) {
  ArrayRef<int64_t> q = shape(query), k = shape(key), v = shape(value);
  double scores = double(q[0]) * q[1] * q[2] * k[2];
  return 2.0 * scores * q[3] + 5.0 * scores + 2.0 * scores * v[3];
}

double ampc::estimateFlops(Operation *op) {
  return llvm::TypeSwitch<Operation *, double>(op)
      // [.., M, K] x [.., K, N]: 2*K flops per output element (K is the
      // lhs's second-last axis when it is stored transposed).
      .Case<MatmulOp, BatchMatmulOp>([](auto o) {
        ArrayRef<int64_t> l = shape(o.getLhs());
        return 2.0 * numel(o.getResult()) *
               (o.getLhsTransposed() ? l[l.size() - 2] : l.back());
      })
      .Case([](LinearOp o) {
        double out = numel(o.getResult());
        return 2.0 * out * shape(o.getInput()).back() +
               (o.getBias() ? out : 0.0);
      })
      // The linear, then GELU (tanh) on its accumulator.
      .Case([](LinearGeluOp o) {
        double out = numel(o.getResult());
        return 2.0 * out * shape(o.getInput()).back() +
               (o.getBias() ? out : 0.0) + 8.0 * out;
      })
      // The GEMM, then GELU's derivative (about GELU and a multiply).
      .Case([](MatmulGeluBackwardOp o) {
        ArrayRef<int64_t> l = shape(o.getLhs());
        double out = numel(o.getResult());
        return 2.0 * out * (o.getLhsTransposed() ? l[0] : l[1]) + 10.0 * out;
      })
      .Case([](Conv2dOp o) {
        ArrayRef<int64_t> w = shape(o.getWeight()); // [O, C/g, KH, KW]
        double out = numel(o.getResult());
        return 2.0 * out * w[1] * w[2] * w[3] + (o.getBias() ? out : 0.0);
      })
      .Case([](ConvTranspose2dOp o) {
        // Each input element meets Cout/g * KH * KW weights.
        ArrayRef<int64_t> w = shape(o.getWeight()); // [Cin, Cout/g, KH, KW]
        double in = numel(o.getInput());
        return 2.0 * in * w[1] * w[2] * w[3] +
               (o.getBias() ? numel(o.getResult()) : 0.0);
      })
      .Case([](ScaledDotProductAttentionOp o) {
        return attentionFlops(o.getQuery(), o.getKey(), o.getValue());
      })
      .Case([](ScaledDotProductAttentionStatsOp o) {
        return attentionFlops(o.getQ(), o.getK(), o.getV());
      })
      .Case<PackedAttentionOp, PackedAttentionStatsOp>([](auto o) {
        // As scaled_dot_product_attention on q, k, v [B, H, T, D].
        ArrayRef<int64_t> x = shape(o.getQkv());
        double d = double(x[2]) / (3 * o.getHeads());
        double scores = double(x[0]) * o.getHeads() * x[1] * x[1];
        return 2.0 * scores * d + 5.0 * scores + 2.0 * scores * d;
      })
      .Case<SoftmaxOp, LogSoftmaxOp>(
          [](auto o) { return 5.0 * numel(o.getResult()); })
      .Case([](LayerNormOp o) { return 8.0 * numel(o.getResult()); })
      .Case([](RmsNormOp o) { return 5.0 * numel(o.getResult()); })
      .Case([](BatchNormOp o) { return 8.0 * numel(o.getResult()); })
      .Case([](GroupNormOp o) { return 8.0 * numel(o.getResult()); })
      .Case([](CrossEntropyOp o) { return 5.0 * numel(o.getLogits()); })
      .Case([](MseLossOp o) { return 3.0 * numel(o.getInput()); })
      .Case([](NllLossOp o) { return numel(o.getLabels()); })
      .Case([](BinaryCrossEntropyWithLogitsOp o) {
        return 8.0 * numel(o.getInput());
      })
      .Case<CumsumOp, ArgmaxOp>([](auto o) { return numel(o.getInput()); })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
          [](auto o) { return numel(o.getInput()); })
      .Case<MaxPool2dOp, AvgPool2dOp>([](auto o) {
        ArrayRef<int64_t> k = o.getKernelSize();
        return numel(o.getResult()) * k[0] * k[1];
      })
      // Every input cell is summed into at least one window.
      .Case([](AdaptiveAvgPool2dOp o) {
        return numel(o.getInput()) + numel(o.getResult());
      })
      // Two lerps along a row and one across: 6 products and 3 sums.
      .Case([](UpsampleBilinear2dOp o) { return 9.0 * numel(o.getResult()); })
      .Case([](GeluOp o) { return 8.0 * numel(o.getResult()); })
      .Case<AddOp, SubOp, MulOp, DivOp, NegOp, ReluOp, TanhOp, SigmoidOp,
            ExpOp, LogOp, SqrtOp, RsqrtOp, PowOp, DropoutOp>(
          [](auto o) { return numel(o.getResult()); })
      .Default([](Operation *) { return 0.0; });
}
