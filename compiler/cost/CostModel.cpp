//===- CostModel.cpp - One rule per kernel-level op -----------------------===//
//
// Each rule mirrors the code it names; keep them together when either
// changes. Sizes of scratch buffers follow the runtime (FP32 scores and
// their half copy in attention, float2 row statistics in the norms, the
// column-sum partials of ColumnSums.cuh).
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"

#include "compiler/amp/Flops.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/ValueAliases.h"
#include "runtime/kernels/AttentionPath.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace ampc::cost;

llvm::StringRef ampc::cost::kindName(Kind kind) {
  switch (kind) {
  case Kind::Gemm:
    return "gemm";
  case Kind::Fused:
    return "fused";
  case Kind::Runtime:
    return "runtime";
  case Kind::Epilogue:
    return "epilogue";
  case Kind::Collective:
    return "collective";
  case Kind::Copy:
    return "copy";
  }
  return "?";
}

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
double numel(Value v) { return double(tensorType(v).getNumElements()); }
double elementBytes(Value v) {
  return double((tensorType(v).getElementTypeBitWidth() + 7) / 8);
}
bool isHalf(Value v) {
  Type e = tensorType(v).getElementType();
  return e.isF16() || e.isBF16();
}
ArrayRef<int64_t> shape(Value v) { return tensorType(v).getShape(); }

double sumBytes(ValueRange vs) {
  double b = 0;
  for (Value v : vs)
    b += tensorBytes(v);
  return b;
}

// FLOPs of one op: compiler/amp/Flops.h for the forward ops, plus the
// elementwise backward ops it leaves out (relu: one select, GELU's
// derivative: about as much as GELU itself and a multiply).
double opFlops(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (name == "graph.relu_backward")
    return numel(op->getResult(0));
  if (name == "graph.gelu_backward")
    return 10 * numel(op->getResult(0));
  return ampc::estimateFlops(op);
}

// cuBLASLt: one cublasLtMatmul, A and B read, C (and the bias) written once.
Launch gemm(std::string name, double read, double written, double flops,
            bool half) {
  Launch l;
  l.name = std::move(name);
  l.kind = Kind::Gemm;
  l.bytesRead = read;
  l.bytesWritten = written;
  l.flops = flops;
  l.halfMath = half;
  return l;
}

Launch runtime(std::string name, double read, double written, double flops) {
  Launch l;
  l.name = std::move(name);
  l.kind = Kind::Runtime;
  l.bytesRead = read;
  l.bytesWritten = written;
  l.flops = flops;
  return l;
}

Launch copy(std::string name, double read, double written) {
  Launch l = runtime(std::move(name), read, written, 0);
  l.kind = Kind::Copy;
  return l;
}

// ColumnSums.cuh: columnPartials (float2 per chunk and column), then
// columnFinish; at most 8 rows: columnDirect alone. |read| is what f(r, j)
// loads over all rows.
void columnSums(int64_t m, int64_t d, double read, double written,
                double flops, std::vector<Launch> &out) {
  if (m <= 8) {
    out.push_back(runtime("columnDirect", read, written, flops));
    return;
  }
  int64_t colBlocks = (d + 31) / 32;
  int64_t chunks =
      std::max<int64_t>(1, std::min<int64_t>(2048 / std::max<int64_t>(colBlocks, 1),
                                             (m + 7) / 8));
  int64_t per = (m + chunks - 1) / chunks;
  chunks = (m + per - 1) / per;
  double partials = double(chunks) * double(d) * 8;
  out.push_back(runtime("columnPartials", read, partials, flops));
  out.push_back(runtime("columnFinish", partials, written, double(d) * chunks));
}

ampc::rt::DType dtypeOf(Value v) {
  Type e = tensorType(v).getElementType();
  if (e.isF16())
    return ampc::rt::DType::F16;
  if (e.isBF16())
    return ampc::rt::DType::BF16;
  if (e.isF32())
    return ampc::rt::DType::F32;
  return ampc::rt::DType::I64; // never eligible
}

// Attention's flash path on the CUDA target (FlashAttention.cpp, chosen by
// runtime/kernels/AttentionPath.h as the runtime does): cuDNN's fused SDPA,
// one library call that reads q, k, v and writes o; the scores never leave
// the chip. The backward recomputes the forward with its statistics (o and
// an FP32 log-sum-exp per query row), then cuDNN's backward reads q, k, v,
// o, g and the statistics, writes dq, dk, dv, and goes through an FP32 dQ
// accumulator and an FP32 rowsum(dO * O) per row in its workspace (each
// written and read once). FLOPs as the math path's GEMMs, but over the
// scores a causal mask keeps (cuDNN skips the masked tiles; the math path
// computes them all).
// scaled_dot_product_attention_stats and its backward (|saved|, graph-save-
// attention-stats): the forward also writes the statistics and the
// backward reads them with o (operands q, k, v, o, stats, g) instead of
// running the forward again.
bool flashAttention(Operation *op, bool backward, std::vector<Launch> &out,
                    bool saved = false) {
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  ArrayRef<int64_t> qs = shape(q), vs = shape(v);
  int64_t d = qs.back(), e = vs.back();
  bool masked = !saved && op->getNumOperands() > (backward ? 4u : 3u);
  Value gy = backward ? op->getOperand(saved ? 5 : 3) : Value();
  std::vector<ampc::rt::DType> others = {dtypeOf(k), dtypeOf(v)};
  if (backward)
    others.push_back(dtypeOf(gy));
  for (Value r : op->getResults())
    if (backward || r == op->getResult(0)) // not the f32 statistics
      others.push_back(dtypeOf(r));
  // The shared rule, one operand type at a time.
  for (ampc::rt::DType t : others)
    if (!ampc::kernels::flashAttentionEligible(dtypeOf(q), {t}, d, e, masked))
      return false;
  int64_t t = qs[qs.size() - 2], s = shape(k)[shape(k).size() - 2];
  double rows = numel(q) / double(d); // query rows over all heads
  // Scores kept per (batch, head): query i sees keys 0..i under the
  // (top-left) causal mask.
  double kept = double(t) * double(s);
  if (op->hasAttr("causal"))
    kept = t <= s ? double(t) * double(t + 1) / 2
                  : double(s) * double(s + 1) / 2 + double(t - s) * double(s);
  double scores = rows / double(t) * kept;
  double qkv = tensorBytes(q) + tensorBytes(k) + tensorBytes(v);
  double fwdFlops = 2 * scores * double(d + e);
  double oBytes = rows * double(e) * elementBytes(q), stats = rows * 4;
  if (!backward) {
    out.push_back(gemm(saved ? "cudnnFlashAttention (stats)"
                             : "cudnnFlashAttention",
                       qkv, tensorBytes(op->getResult(0)) + (saved ? stats : 0),
                       fwdFlops, true));
    return true;
  }
  if (!saved)
    out.push_back(gemm("cudnnFlashAttention (recompute)", qkv, oBytes + stats,
                       fwdFlops, true));
  double dqAccumulator = numel(q) * 4, rowDot = rows * 4;
  out.push_back(gemm("cudnnFlashAttentionBackward",
                     qkv + oBytes + tensorBytes(gy) + stats + dqAccumulator +
                         rowDot,
                     sumBytes(op->getResults()) + dqAccumulator + rowDot,
                     2 * scores * double(3 * d + 2 * e), true));
  return true;
}

// Attention.cu: the math path, scores materialised in FP32 plus a half copy
// (also the stats ops' off the flash path, |saved|: no mask, g operand 5).
void attention(Operation *op, bool backward, std::vector<Launch> &out,
               bool saved = false) {
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  ArrayRef<int64_t> qs = shape(q), ks = shape(k), vs = shape(v);
  double t = double(qs[qs.size() - 2]), d = double(qs.back());
  double s = double(ks[ks.size() - 2]), e = double(vs.back());
  double batch = numel(q) / (t * d);
  double scores = batch * t * s;
  double p32 = scores * 4, pLow = scores * elementBytes(backward ? q : v);
  bool half = isHalf(q);
  // probabilities(): P = softmax(scale q k^T) with the causal mask and the
  // optional mask (read once; its broadcast re-reads hit the cache). Under
  // grouped-query attention k and v are smaller, the scores are not.
  unsigned maskAt = backward ? 4 : 3;
  double maskBytes = !saved && op->getNumOperands() > maskAt
                         ? tensorBytes(op->getOperand(maskAt))
                         : 0.0;
  out.push_back(gemm("gemm QK^T", tensorBytes(q) + tensorBytes(k), p32,
                     2 * scores * d, half));
  out.push_back(
      runtime("maskedSoftmax", p32 + maskBytes, p32 + pLow, 5 * scores));
  if (!backward) {
    out.push_back(gemm("gemm PV", pLow + tensorBytes(v),
                       tensorBytes(op->getResult(0)), 2 * scores * e, half));
    return;
  }
  Value gy = op->getOperand(saved ? 5 : 3);
  Value dq = op->getResult(0), dk = op->getResult(1), dv = op->getResult(2);
  out.push_back(gemm("gemm dV = P^T G", pLow + tensorBytes(gy),
                     tensorBytes(dv), 2 * scores * e, half));
  out.push_back(gemm("gemm dP = G V^T", tensorBytes(gy) + tensorBytes(v), p32,
                     2 * scores * e, half));
  out.push_back(runtime("softmaxBackwardRows", 2 * p32, p32 + pLow,
                        4 * scores));
  out.push_back(gemm("gemm dQ = dS K", pLow + tensorBytes(k), tensorBytes(dq),
                     2 * scores * d, half));
  out.push_back(gemm("gemm dK = dS^T Q", pLow + tensorBytes(q),
                     tensorBytes(dk), 2 * scores * d, half));
}

// packed_attention and its backward (Attention.cu, FlashAttention.cpp):
// where eligible, cuDNN's flash attention on strided views of qkv [B, T, 3,
// H, D], o and g [B, T, H, D] and dqkv: flashAttention's traffic, with no
// copy around it. Otherwise (f32, other head dims; the CPU target) the copy
// path: a transpose gathers q, k, v into [B, H, T, D] (forward; the
// backward also g), the math attention runs on them, a transpose puts o
// (dq, dk, dv) in place.
// packed_attention_stats and its backward (|saved|, graph-save-attention-
// stats): on the flash path the forward also writes the FP32 statistics and
// the backward reads them with o instead of running the forward again;
// elsewhere the rows are packed_attention's.
void packedAttention(Operation *op, bool backward, bool cuda,
                     std::vector<Launch> &out, bool saved = false) {
  Value qkv = op->getOperand(0), res = op->getResult(0);
  ArrayRef<int64_t> s = shape(qkv);
  double heads = double(op->getAttrOfType<IntegerAttr>("heads").getInt());
  double b = double(s[0]), t = double(s[1]), d = double(s[2]) / (3 * heads);
  double rows = b * heads * t, part = tensorBytes(qkv) / 3;
  double es = elementBytes(qkv);
  std::vector<ampc::rt::DType> others = {dtypeOf(res)};
  if (backward) // g, the last operand
    others.push_back(dtypeOf(op->getOperand(op->getNumOperands() - 1)));
  bool flash = cuda;
  for (ampc::rt::DType x : others)
    flash = flash && ampc::kernels::flashAttentionEligible(
                         dtypeOf(qkv), {x}, int64_t(d), int64_t(d), false);
  if (flash) {
    double kept = op->hasAttr("causal") ? t * (t + 1) / 2 : t * t;
    double scores = b * heads * kept, stats = rows * 4;
    double fwdFlops = 2 * scores * 2 * d;
    if (!backward) {
      out.push_back(gemm(saved ? "cudnnFlashAttention (packed, stats)"
                               : "cudnnFlashAttention (packed)",
                         3 * part, saved ? part + stats : part, fwdFlops,
                         true));
      return;
    }
    if (!saved)
      out.push_back(gemm("cudnnFlashAttention (packed, recompute)", 3 * part,
                         part + stats, fwdFlops, true));
    double dqAccumulator = rows * d * 4, rowDot = rows * 4;
    out.push_back(gemm("cudnnFlashAttentionBackward (packed)",
                       3 * part + 2 * part + stats + dqAccumulator + rowDot,
                       3 * part + dqAccumulator + rowDot,
                       2 * scores * 5 * d, true));
    return;
  }
  // The copy path's math attention over all T x T scores (as attention()).
  double scores = b * heads * t * t, p32 = scores * 4, pLow = scores * es;
  bool half = isHalf(qkv);
  out.push_back(runtime("stridedCopyKernel (gather q, k, v)", 3 * part,
                     3 * part, 0));
  if (backward)
    out.push_back(runtime("stridedCopyKernel (gather g)", part, part, 0));
  out.push_back(gemm("gemm QK^T", 2 * part, p32, 2 * scores * d, half));
  out.push_back(runtime("maskedSoftmax", p32, p32 + pLow, 5 * scores));
  if (!backward) {
    out.push_back(gemm("gemm PV", pLow + part, part, 2 * scores * d, half));
    out.push_back(runtime("stridedCopyKernel (o)", part, part, 0));
    return;
  }
  out.push_back(gemm("gemm dV = P^T G", pLow + part, part, 2 * scores * d,
                     half));
  out.push_back(gemm("gemm dP = G V^T", 2 * part, p32, 2 * scores * d, half));
  out.push_back(runtime("softmaxBackwardRows", 2 * p32, p32 + pLow,
                        4 * scores));
  out.push_back(gemm("gemm dQ = dS K", pLow + part, part, 2 * scores * d,
                     half));
  out.push_back(gemm("gemm dK = dS^T Q", pLow + part, part, 2 * scores * d,
                     half));
  out.push_back(runtime("stridedCopyKernel (dqkv)", 3 * part, 3 * part, 0));
}

// Norm.cu's fused kernels (runtime/cuda/Norm.h): rows of up to
// kFusedNormMaxD elements, one warp per row.
constexpr int64_t kFusedNormMaxD = 1024;
bool fusedNorm(int64_t d) { return d >= 1 && d <= kFusedNormMaxD; }

// Norm.cu, fused: normBackwardWarp reads x, w and g once, writes dx and
// per-chunk (g * xhat, g) column sums (float2; at most 512 chunks of at
// least 8 rows, rowChunks() there); columnFinish adds the chunks into the
// weight (and bias) gradients. Rows of more than 512 (NormSums::Auto, the
// default: runtime/cuda/Norm.h): normBackwardWarp writes dx and the row
// statistics, normColumnPartials reads x and g again for per-chunk column
// sums (64 rows a chunk), columnFinish adds them. Wider rows than the fused
// kernels hold: normRows for the statistics
// (float2 per row), normBackwardRows for dx, column sums for the weight (and
// bias) gradients.
// kernel.layer_norm_backward_add (same operands 0-2 and results 0-2) reads
// |extraRead| more (acc) and writes |extraWritten| more (the half copy) in
// normBackwardWarp.
void normBackward(Operation *op, bool rms, std::vector<Launch> &out,
                  double extraRead = 0, double extraWritten = 0) {
  Value x = op->getOperand(0), w = op->getOperand(1), g = op->getOperand(2);
  int64_t d = shape(x).back();
  int64_t m = int64_t(numel(x)) / std::max<int64_t>(d, 1);
  double n = numel(x), stats = double(m) * 8;
  double dparams = tensorBytes(op->getResult(1)) +
                   (rms ? 0.0 : tensorBytes(op->getResult(2)));
  const char *warpName =
      extraRead > 0 ? "normBackwardWarp (+add)" : "normBackwardWarp";
  if (fusedNorm(d) && d > 512) {
    out.push_back(runtime(warpName,
                          tensorBytes(x) + tensorBytes(w) + tensorBytes(g) +
                              extraRead,
                          tensorBytes(op->getResult(0)) + stats + extraWritten,
                          (rms ? 12 : 14) * n + (extraRead > 0 ? n : 0)));
    // normColumnPartials: chunks of 64 rows, more past 4194240 rows (Norm.cu
    // columnChunkRows).
    int64_t per = std::max<int64_t>(64, (m + 65534) / 65535);
    per = (per + 15) / 16 * 16;
    int64_t chunks = (m + per - 1) / per;
    double partials = double(chunks) * double(d) * 8;
    out.push_back(runtime("normColumnPartials",
                          tensorBytes(x) + tensorBytes(g) + stats, partials,
                          4 * n));
    out.push_back(runtime("columnFinish", partials, dparams,
                          double(d) * double(chunks)));
    return;
  }
  if (fusedNorm(d)) {
    int64_t chunks =
        std::max<int64_t>(1, std::min<int64_t>(512, (m + 7) / 8));
    int64_t per = (m + chunks - 1) / chunks;
    chunks = (m + per - 1) / per;
    double partials = double(chunks) * double(d) * 8;
    out.push_back(runtime(warpName,
                          tensorBytes(x) + tensorBytes(w) + tensorBytes(g) +
                              extraRead,
                          tensorBytes(op->getResult(0)) + partials +
                              extraWritten,
                          (rms ? 16 : 18) * n + (extraRead > 0 ? n : 0)));
    out.push_back(runtime("columnFinish", partials, dparams,
                          double(d) * double(chunks)));
    return;
  }
  out.push_back(runtime("normRows", tensorBytes(x), stats, (rms ? 2 : 4) * n));
  out.push_back(runtime("normBackwardRows",
                        tensorBytes(x) + tensorBytes(w) + tensorBytes(g) + stats,
                        tensorBytes(op->getResult(0)), 10 * n));
  columnSums(m, d, tensorBytes(x) + tensorBytes(g) + stats, dparams, 4 * n,
             out);
}

// Loss.cu: ceRows writes lse, nll, smooth and counted (4 floats a row);
// ceFinish reduces them in one block.
void crossEntropy(Operation *op, bool backward, std::vector<Launch> &out) {
  Value logits = op->getOperand(0), labels = op->getOperand(1);
  double rows = numel(labels), n = numel(logits);
  if (backward) {
    // Loss.cu's default backward (AMPC_CUDA_CE_BACKWARD=fused): the counted
    // rows from the labels, then one launch per row for its max, sum of
    // exps and gradient (the row's re-reads counted once: from cache).
    out.push_back(runtime("ceCount", tensorBytes(labels), 4, rows));
    out.push_back(runtime("ceBackwardFused",
                          tensorBytes(logits) + tensorBytes(labels) +
                              tensorBytes(op->getOperand(2)) + 4,
                          tensorBytes(op->getResult(0)), 8 * n));
    return;
  }
  out.push_back(runtime("ceRows", tensorBytes(logits) + tensorBytes(labels),
                        16 * rows, 5 * n));
  out.push_back(runtime("ceFinish", 12 * rows, tensorBytes(op->getResult(0)),
                        3 * rows));
}

// cross_entropy_with_grad (Loss.cu, AMPC_CUDA_CROSS_ENTROPY=one-pass): the
// counted rows, one launch per row for its terms and gradient (ceRows' and
// ceBackwardFused's work from one read of the logits), the loss.
void crossEntropyWithGrad(Operation *op, std::vector<Launch> &out) {
  Value logits = op->getOperand(0), labels = op->getOperand(1);
  double rows = numel(labels), n = numel(logits);
  out.push_back(runtime("ceCount", tensorBytes(labels), 4, rows));
  out.push_back(runtime("ceRowsGrad",
                        tensorBytes(logits) + tensorBytes(labels) +
                            tensorBytes(op->getOperand(2)) + 4,
                        tensorBytes(op->getResult(1)) + 12 * rows, 9 * n));
  out.push_back(runtime("ceFinish", 12 * rows, tensorBytes(op->getResult(0)),
                        3 * rows));
}

// Embedding.cu: memset, keys, CUB's onesweep radix sort (a histogram, a
// scan, one pass per 8 key bits over keys and positions), then one block
// per id sums its run of gradient rows.
// nll_loss, binary_cross_entropy_with_logits, argmax, gather, cumsum and
// their backward ops (runtime/cuda/LossIndex.cu); false for other ops.
bool lossIndexLaunches(Operation *op, StringRef name, double in, double res,
                       std::vector<Launch> &out) {
  auto reduction = op->getAttrOfType<StringAttr>("reduction");
  bool none = reduction && reduction.getValue() == "none";
  if (name == "graph.nll_loss") {
    // Only each row's labelled element is read.
    Value x = op->getOperand(0), labels = op->getOperand(1);
    double read = tensorBytes(labels) + numel(labels) * elementBytes(x);
    out.push_back(runtime(none ? "nllRows" : "nllSum", read, res, numel(labels)));
    return true;
  }
  if (name == "graph.nll_loss_backward") {
    Value labels = op->getOperand(0);
    out.push_back(runtime("nllSum", tensorBytes(labels), 4, numel(labels)));
    out.push_back(runtime("nllBackward", in, res, 0));
    return true;
  }
  if (name == "graph.binary_cross_entropy_with_logits") {
    double n = numel(op->getOperand(0));
    if (none) {
      out.push_back(runtime("bceElements", in, res, ampc::estimateFlops(op)));
      return true;
    }
    double blocks = std::max(1.0, std::min(std::ceil(n / 256), 1024.0));
    out.push_back(
        runtime("bceElements", in, 4 * blocks, ampc::estimateFlops(op)));
    out.push_back(runtime("sumPartials", 4 * blocks, res, blocks));
    return true;
  }
  if (name == "graph.argmax") {
    out.push_back(runtime("argmaxRows", in, res, numel(op->getOperand(0))));
    return true;
  }
  if (name == "graph.cumsum") {
    out.push_back(runtime("cumsumLines", in, res, numel(op->getOperand(0))));
    return true;
  }
  if (name == "graph.gather") {
    // The index, and one input element per index element.
    Value x = op->getOperand(0), index = op->getOperand(1);
    out.push_back(runtime("gatherElements",
                          tensorBytes(index) + numel(index) * elementBytes(x),
                          res, 0));
    return true;
  }
  if (name == "graph.gather_backward") {
    // FP32 accumulator: zeroed, scatter-added with atomics, narrowed.
    double n = numel(op->getOperand(0)), m = numel(op->getResult(0));
    out.push_back(copy("cudaMemsetAsync", 0, 4 * m));
    out.push_back(runtime("gatherScatter", in, 4 * n, n));
    out.push_back(runtime("narrowFloats", 4 * m, res, 0));
    return true;
  }
  return false;
}

void embeddingBackward(Operation *op, std::vector<Launch> &out) {
  Value ids = op->getOperand(0), g = op->getOperand(1);
  Value dt = op->getResult(0);
  double n = numel(ids);
  int64_t v = shape(dt)[0];
  int bits = 1;
  while (bits < 32 && (int64_t(1) << bits) <= v)
    ++bits;
  // Embedding.cu: the table zero-filled, or with init (a tied table's
  // other gradient) set to init + 0.
  bool init = op->getNumOperands() > 2;
  if (init)
    out.push_back(runtime("embeddingInit", tensorBytes(op->getOperand(2)),
                          tensorBytes(dt), numel(dt)));
  else
    out.push_back(copy("cudaMemsetAsync", 0, tensorBytes(dt)));
  out.push_back(runtime("embeddingKeys", tensorBytes(ids), 8 * n, 0));
  out.push_back(runtime("cub::DeviceRadixSortHistogramKernel", 4 * n, 0, 0));
  out.push_back(runtime("cub::DeviceRadixSortExclusiveSumKernel", 0, 0, 0));
  for (int pass = 0; pass < (bits + 7) / 8; ++pass)
    out.push_back(
        runtime("cub::DeviceRadixSortOnesweepKernel", 8 * n, 8 * n, 0));
  // Each id's row of g is added to its table row (and init's element read,
  // at most once each).
  double elems = numel(g);
  double initBytes =
      init ? std::min(elems * elementBytes(op->getOperand(2)),
                      tensorBytes(op->getOperand(2)))
           : 0.0;
  out.push_back(runtime("embeddingRuns", 8 * n + tensorBytes(g) + initBytes,
                        std::min(elems * elementBytes(dt), tensorBytes(dt)),
                        elems + (init ? std::min(elems, numel(dt)) : 0.0)));
}

// Reduce.cu (reduction()): sums whose reduced axes all come before the
// kept ones take column sums, others one block per output element. No
// axes reduces them all.
bool reducesLeadingAxes(Operation *op) {
  int64_t rank = int64_t(shape(op->getOperand(0)).size());
  SmallVector<bool> reduced(rank, false);
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  if (!axes || axes.empty())
    reduced.assign(rank, true);
  else
    for (int64_t a : axes.asArrayRef())
      if (a + (a < 0 ? rank : 0) >= 0 && a + (a < 0 ? rank : 0) < rank)
        reduced[a + (a < 0 ? rank : 0)] = true;
  bool kept = false, leading = true;
  for (bool r : reduced) {
    leading &= !(r && kept);
    kept |= !r;
  }
  return leading;
}

void cudaRules(Operation *op, RuleState &state, std::vector<Launch> &out) {
  StringRef name = op->getName().getStringRef();
  double in = sumBytes(op->getOperands()), res = sumBytes(op->getResults());

  if (auto fused = dyn_cast<ampc::kernel::FusedElementwiseOp>(op)) {
    double flops = 0;
    for (Operation &inner : fused.getBody().front().without_terminator())
      flops += opFlops(&inner);
    int k = state.nextFused++;
    Launch l = runtime(size_t(k) < state.fusedNames.size()
                           ? state.fusedNames[k]
                           : "fused_" + std::to_string(k),
                       in, res, flops);
    l.kind = Kind::Fused;
    out.push_back(l);
    return;
  }
  if (ampc::aliasesOperand(op, /*evaluation=*/false) || name == "graph.input" ||
      name == "graph.param")
    return; // aliases (passes/ValueAliases.h): no copy
  if (name == "graph.constant") {
    auto dense = dyn_cast<DenseElementsAttr>(op->getAttr("value"));
    if (dense && dense.isSplat())
      out.push_back(runtime("fill", 0, res, 0));
    else
      out.push_back(copy("cudaMemcpyAsync", res, res));
    return;
  }
  if (name == "graph.linear" || name == "graph.matmul" ||
      name == "graph.batch_matmul") {
    out.push_back(gemm("cublasLtMatmul", in, res, ampc::estimateFlops(op),
                       isHalf(op->getOperand(0))));
    return;
  }
  if (name == "graph.matmul_bias_grad") {
    // Linalg.cpp, matmulBiasGradKernel: one cublasLtMatmul with the BGRADB
    // epilogue: A and B read once, C and the bias gradient written (res).
    // FLOPs: the GEMM's 2 M N K and the sum's M K additions.
    double m = numel(op->getResult(1));
    double k = numel(op->getOperand(0)) / std::max(m, 1.0);
    double n = numel(op->getResult(0)) / std::max(m, 1.0);
    out.push_back(gemm("cublasLtMatmul", in, res, 2 * m * n * k + m * k,
                       isHalf(op->getOperand(0))));
    return;
  }
  if (name == "graph.linear_gelu" || name == "graph.matmul_gelu_backward") {
    // Linalg.cpp: one cublasLtMatmul with the GELU_AUX(_BIAS) or DGELU
    // epilogue: the operands (the backward's preactivation among them) read
    // once, the result (and the forward's preactivation) written once.
    out.push_back(gemm("cublasLtMatmul", in, res, ampc::estimateFlops(op),
                       isHalf(op->getOperand(0))));
    return;
  }
  if (name == "graph.conv2d" || name == "graph.conv2d_backward_input" ||
      name == "graph.conv2d_backward_weight") {
    // cuDNN (one call; its internal kernels are not counted apart).
    // Weight [O, C/g, KH, KW]; the backward ops do the forward's MACs.
    Value w = name == "graph.conv2d_backward_weight" ? op->getResult(0)
                                                      : op->getOperand(1);
    Value big = name == "graph.conv2d" ? op->getResult(0) : op->getOperand(
                    name == "graph.conv2d_backward_input" ? 0 : 1);
    ArrayRef<int64_t> ws = shape(w);
    double flops = 2 * numel(big) * ws[1] * ws[2] * ws[3];
    bool half = isHalf(op->getOperand(0));
    if (name != "graph.conv2d" || op->getNumOperands() < 3) {
      out.push_back(gemm("cudnnConvolution", in, res, flops, half));
      return;
    }
    // Conv.cu, conv2dCudnn: a half y first holds the bias (biasNarrow) and
    // cuDNN adds its result to it (beta = 1); an FP32 y gets the bias added
    // in place after.
    Value bias = op->getOperand(2), y = op->getResult(0);
    double xw = tensorBytes(op->getOperand(0)) + tensorBytes(op->getOperand(1));
    if (!isHalf(y)) {
      out.push_back(gemm("cudnnConvolution", xw, res, flops - numel(y), half));
      out.push_back(runtime("biasNarrow", tensorBytes(bias) + res, res, numel(y)));
      return;
    }
    out.push_back(runtime("biasNarrow", tensorBytes(bias), res, 0));
    out.push_back(gemm("cudnnConvolution", xw + res, res, flops, half));
    return;
  }
  if (name == "graph.conv_transpose2d") {
    // Conv.cu, backwardInput: cuDNN's backward-data pass; a bias as conv2d's
    // (f16/bf16: written into y first, blended with beta = 1; f32: added in
    // place after).
    double flops = ampc::estimateFlops(op);
    bool half = isHalf(op->getOperand(0));
    if (op->getNumOperands() < 3) {
      out.push_back(gemm("cudnnConvolution", in, res, flops, half));
      return;
    }
    Value bias = op->getOperand(2), y = op->getResult(0);
    double xw = tensorBytes(op->getOperand(0)) + tensorBytes(op->getOperand(1));
    if (!isHalf(y)) {
      out.push_back(gemm("cudnnConvolution", xw, res,
                         flops - numel(y), half));
      out.push_back(runtime("biasNarrow", tensorBytes(bias) + res, res, numel(y)));
      return;
    }
    out.push_back(runtime("biasNarrow", tensorBytes(bias), res, 0));
    out.push_back(gemm("cudnnConvolution", xw + res, res, flops, half));
    return;
  }
  if (name == "graph.scaled_dot_product_attention" ||
      name == "graph.scaled_dot_product_attention_backward") {
    bool backward = name.ends_with("_backward");
    if (state.target == Target::Cuda && flashAttention(op, backward, out))
      return;
    return attention(op, backward, out);
  }
  if (name == "graph.scaled_dot_product_attention_stats" ||
      name == "graph.scaled_dot_product_attention_stats_backward") {
    bool backward = name.ends_with("_backward");
    if (state.target == Target::Cuda &&
        flashAttention(op, backward, out, /*saved=*/true))
      return;
    return attention(op, backward, out, /*saved=*/true);
  }
  if (name == "graph.packed_attention" ||
      name == "graph.packed_attention_backward")
    return packedAttention(op, name.ends_with("_backward"),
                           state.target == Target::Cuda, out);
  if (name == "graph.packed_attention_stats" ||
      name == "graph.packed_attention_stats_backward")
    return packedAttention(op, name.ends_with("_backward"),
                           state.target == Target::Cuda, out, /*saved=*/true);
  if (name == "graph.layer_norm" || name == "graph.rms_norm") {
    // Norm.cu: one warp per row (normRowsWarp), or a block per row when the
    // rows are wider than the fused kernel holds.
    out.push_back(runtime(fusedNorm(shape(op->getOperand(0)).back())
                              ? "normRowsWarp"
                              : "normRows",
                          in, res, ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.layer_norm_backward")
    return normBackward(op, false, out);
  // kernel-fuse-residual-norm's row kernels (Norm.cu): the add inside
  // normRowsWarp / normBackwardWarp; wider rows run the previous kernels
  // (the add, then the norm; the backward, the add, the cast).
  if (name == "kernel.add_layer_norm" || name == "kernel.add_rms_norm") {
    Value sum = op->getResult(0), y = op->getResult(1);
    double flops = 9 * numel(y);
    if (fusedNorm(shape(y).back())) {
      out.push_back(runtime("normRowsWarp (+add)", in, res, flops));
      return;
    }
    double ab = tensorBytes(op->getOperand(0)) + tensorBytes(op->getOperand(1));
    out.push_back(runtime("mapKernel", ab, tensorBytes(sum), numel(sum)));
    out.push_back(runtime("normRows", in - ab + tensorBytes(sum),
                          tensorBytes(y), flops - numel(y)));
    return;
  }
  if (name == "kernel.layer_norm_backward_add" ||
      name == "kernel.rms_norm_backward_add") {
    bool rms = name == "kernel.rms_norm_backward_add";
    Value x = op->getOperand(0), acc = op->getOperand(3);
    unsigned halfAt = rms ? 2 : 3;
    double half = op->getNumResults() > halfAt
                      ? tensorBytes(op->getResult(halfAt))
                      : 0;
    if (fusedNorm(shape(x).back()))
      return normBackward(op, rms, out, tensorBytes(acc), half);
    normBackward(op, rms, out);
    double dx = tensorBytes(op->getResult(0));
    out.push_back(runtime("mapKernel", dx + tensorBytes(acc), dx, numel(x)));
    if (half > 0)
      out.push_back(runtime("mapKernel", dx, half, 0));
    return;
  }
  if (name == "graph.rms_norm_backward")
    return normBackward(op, true, out);
  if (name == "graph.softmax" || name == "graph.log_softmax") {
    out.push_back(runtime("softmaxRows", in, res, ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.cross_entropy" &&
      isa<FloatType>(
          cast<RankedTensorType>(op->getOperand(1).getType()).getElementType())) {
    // Probability labels (LossIndex.cu): one block per row, then one sum.
    double rows = numel(op->getOperand(0)) /
                  double(std::max<int64_t>(shape(op->getOperand(0)).back(), 1));
    out.push_back(runtime("softCeRows", in, 4 * rows, ampc::estimateFlops(op)));
    out.push_back(runtime("sumPartials", 4 * rows, res, rows));
    return;
  }
  if (name == "graph.cross_entropy")
    return crossEntropy(op, false, out);
  if (name == "graph.cross_entropy_backward")
    return crossEntropy(op, true, out);
  if (name == "graph.cross_entropy_with_grad")
    return crossEntropyWithGrad(op, out);
  if (name == "graph.mse_loss") {
    double blocks = std::min(std::ceil(numel(op->getOperand(0)) / 256), 1024.0);
    out.push_back(runtime("sqDiffPartials", in, 4 * blocks,
                          ampc::estimateFlops(op)));
    out.push_back(runtime("meanOfPartials", 4 * blocks, res, blocks));
    return;
  }
  if (lossIndexLaunches(op, name, in, res, out))
    return;
  if (name == "graph.embedding") {
    // Only the rows the ids name are read.
    Value ids = op->getOperand(0); // (ids, table)
    out.push_back(runtime("embeddingRows", tensorBytes(ids) + res, res, 0));
    return;
  }
  if (name == "graph.embedding_backward")
    return embeddingBackward(op, out);
  if (name == "graph.reduce_sum" || name == "graph.reduce_mean") {
    Value x = op->getOperand(0);
    if (numel(op->getResult(0)) == 0)
      return; // nothing is launched
    if (reducesLeadingAxes(op) && numel(x) > 0) {
      double cols = numel(op->getResult(0));
      columnSums(int64_t(numel(x) / cols), int64_t(cols), in, res, numel(x),
                 out);
      return;
    }
    out.push_back(runtime("reduceKernel", in, res, numel(x)));
    return;
  }
  if (name == "graph.reduce_max") {
    if (numel(op->getResult(0)) > 0)
      out.push_back(runtime("reduceKernel", in, res, numel(op->getOperand(0))));
    return;
  }
  if (name == "graph.reduce_max_backward") {
    Value x = op->getOperand(0), g = op->getOperand(1);
    out.push_back(runtime("reduceKernel", tensorBytes(x), 2 * numel(g) * 4,
                          numel(x)));
    out.push_back(runtime("reduceMaxBackwardKernel", in + 2 * numel(g) * 4, res,
                          numel(x)));
    return;
  }
  if (name == "graph.transpose" || name == "graph.slice" ||
      name == "graph.broadcast_to") {
    // A strided copy reads what it writes (a broadcast reads its source).
    out.push_back(runtime("stridedCopyKernel", std::min(in, res), res, 0));
    return;
  }
  if (name == "graph.slice_backward") {
    out.push_back(copy("cudaMemsetAsync", 0, res));
    out.push_back(runtime("stridedCopyKernel", in, in, 0));
    return;
  }
  if (name == "graph.concat") {
    // Shape.cu: up to 8 inputs in one launch, each element read and
    // written once (the perm only changes the order); more, one each.
    if (op->getNumOperands() <= 8) {
      out.push_back(runtime("stridedCopiesKernel", in, in, 0));
      return;
    }
    for (Value v : op->getOperands())
      out.push_back(
          runtime("stridedCopyKernel", tensorBytes(v), tensorBytes(v), 0));
    return;
  }
  if (name == "graph.max_pool2d" || name == "graph.avg_pool2d") {
    out.push_back(runtime("poolKernel", in, res, ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.max_pool2d_backward" ||
      name == "graph.avg_pool2d_backward") {
    out.push_back(runtime("poolBackwardKernel", in, res, numel(op->getResult(0))));
    return;
  }
  // Resample.cu: one thread per output (forward) or per input element
  // (backward, gathering the outputs that read it); each reads its cells.
  if (name == "graph.adaptive_avg_pool2d") {
    out.push_back(runtime("adaptiveKernel", in, res, ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.adaptive_avg_pool2d_backward") {
    out.push_back(runtime("adaptiveBackwardKernel", in, res,
                          numel(op->getResult(0))));
    return;
  }
  if (name == "graph.upsample_nearest2d") {
    out.push_back(runtime("nearestKernel", std::min(in, res), res, 0));
    return;
  }
  if (name == "graph.upsample_nearest2d_backward") {
    out.push_back(runtime("nearestBackwardKernel", in, res, numel(op->getOperand(0))));
    return;
  }
  // Four taps per output, each input read from memory once at most; the
  // backward gathers each output's g for the taps that read an input (four
  // per output, three FLOPs each: two products and a sum).
  if (name == "graph.upsample_bilinear2d") {
    out.push_back(runtime("bilinearKernel", std::min(in, 4 * res), res,
                          ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.upsample_bilinear2d_backward") {
    out.push_back(runtime("bilinearBackwardKernel", in, res,
                          12 * numel(op->getOperand(0))));
    return;
  }
  // BatchNorm.cu: one block per channel; the training form reads x three
  // times (mean, variance, normalise), the backward four.
  if (name == "graph.batch_norm") {
    double x = tensorBytes(op->getOperand(0));
    out.push_back(runtime("batchNormChannels", in + 2 * x, res,
                          ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.batch_norm_backward") {
    double x = tensorBytes(op->getOperand(0));
    out.push_back(runtime("batchNormBackwardChannels", in + 3 * x, res,
                          10 * numel(op->getOperand(0))));
    return;
  }
  // GroupNorm.cu: one block per (sample, group) reading its run three
  // times; the backward adds the (mean, rstd) scratch and one block per
  // channel for dweight and dbias.
  if (name == "graph.group_norm") {
    double x = tensorBytes(op->getOperand(0));
    out.push_back(runtime("groupNormRuns", in + 2 * x, res,
                          ampc::estimateFlops(op)));
    return;
  }
  if (name == "graph.group_norm_backward") {
    Value x = op->getOperand(0), g = op->getOperand(2);
    double runs = shape(x)[0] * double(op->getAttrOfType<IntegerAttr>(
                                           "num_groups").getInt());
    out.push_back(runtime("groupNormBackwardRuns", in + 2 * tensorBytes(x),
                          tensorBytes(op->getResult(0)) + 8 * runs,
                          10 * numel(x)));
    out.push_back(runtime("groupNormParamSums",
                          tensorBytes(x) + tensorBytes(g) + 8 * runs,
                          2 * tensorBytes(op->getResult(1)), 4 * numel(x)));
    return;
  }
  // Elementwise library kernels (mapKernel: one thread per element) and
  // anything else: one launch over its operands and results.
  out.push_back(runtime(name == "graph.dropout" ? "mapKernel (dropout)"
                                                : "mapKernel",
                        in, res, opFlops(op)));
}

} // namespace

double ampc::cost::tensorBytes(Value v) { return numel(v) * elementBytes(v); }

void ampc::cost::appendLaunches(Operation *op, RuleState &state,
                                std::vector<Launch> &out) {
  size_t first = out.size();
  cudaRules(op, state, out);
  if (out.size() == first)
    return;
  std::string opName = op->getName().getStringRef().str();
  for (size_t i = first; i < out.size(); ++i)
    out[i].op = opName;
  if (state.target == Target::Cuda || isa<kernel::FusedElementwiseOp>(op))
    return;
  // The CPU library runs each op as one call named after it (OpenBLAS for
  // the GEMMs): the same traffic, one row.
  Launch merged = out[first];
  merged.name = opName;
  for (size_t i = first + 1; i < out.size(); ++i) {
    merged.bytesRead += out[i].bytesRead;
    merged.bytesWritten += out[i].bytesWritten;
    merged.flops += out[i].flops;
    merged.halfMath |= out[i].halfMath;
  }
  out.resize(first);
  out.push_back(merged);
}

Launch ampc::cost::hostLaunch(std::string name, std::string op,
                              std::string where, Kind kind, double read,
                              double written, double flops, int64_t count) {
  Launch l;
  l.name = std::move(name);
  l.op = std::move(op);
  l.where = std::move(where);
  l.kind = kind;
  l.bytesRead = read;
  l.bytesWritten = written;
  l.flops = flops;
  l.count = count;
  return l;
}
