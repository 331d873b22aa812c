//===- Pipelines.h - The training pipeline, registered with the passes -*- C++ -*-===//
//
// `ampc-train-pipeline` takes a model file to the kernel level. `ampc
// compile` builds the same pipeline through buildTrainingPipeline(), so
// `ampc-opt --ampc-train-pipeline="amp=fp16 ..."` prints exactly what
// `ampc compile --amp=fp16 ... --dump-ir DIR` leaves as its last dump.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_PASSES_PIPELINES_H
#define AMPC_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>
#include <string>

namespace ampc {

// The options `ampc compile` fixes at compile time, under the same names.
// The hyper-parameter defaults (lr, momentum, ...) are the runtime's where
// not given (runtime/train/Hyper.def).
struct TrainPipelineOptions
    : public mlir::PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> amp{*this, "amp", llvm::cl::desc("off, fp16 or bf16"),
                          llvm::cl::init("off")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, adam or adamw"),
                                llvm::cl::init("adamw")};
  Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("dynamic, static:S or none (default: dynamic for fp16, "
                     "none otherwise)"),
      llvm::cl::init("")};
  Option<double> clipNorm{*this, "clip-norm",
                          llvm::cl::desc("Clip by global norm (0: off)"),
                          llvm::cl::init(0.0)};
  Option<double> clipValue{*this, "clip-value",
                           llvm::cl::desc("Clip by value (0: off)"),
                           llvm::cl::init(0.0)};
  Option<int> accumSteps{*this, "accum-steps",
                         llvm::cl::desc("Micro-batches per optimizer step"),
                         llvm::cl::init(1)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("Nesterov momentum (sgd)"),
                        llvm::cl::init(false)};
  Option<double> lr{*this, "lr", llvm::cl::desc("Default learning rate"),
                    llvm::cl::init(1e-3)};
  Option<double> momentum{*this, "momentum",
                          llvm::cl::desc("Default SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("Default weight decay (negative: torch.optim's default, "
                     "0.01 for adamw, 0 for sgd and adam)"),
      llvm::cl::init(-1.0)};
  Option<int> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("Default clean steps before the scale grows"),
      llvm::cl::init(2000)};
  Option<int> hysteresis{
      *this, "hysteresis",
      llvm::cl::desc("Default overflows in a row before the scale backs off"),
      llvm::cl::init(1)};
  Option<std::string> policy{*this, "policy",
                             llvm::cl::desc("Autocast policy file"),
                             llvm::cl::init("")};
  // The module already holds @<model>_grad (hand-written, or from an
  // earlier run): autocast and autodiff are skipped.
  Option<bool> gradGiven{*this, "grad-given",
                         llvm::cl::desc("Skip autocast and autodiff: the "
                                        "module has @<model>_grad"),
                         llvm::cl::init(false)};
  // graph-fold-gemm-transpose and graph-collapse-data-movement after
  // autodiff (pure data movement and GEMM operand flags); off only to
  // compare against the unfolded step.
  Option<bool> foldDataMovement{
      *this, "fold-data-movement",
      llvm::cl::desc("Transposes into GEMM flags, slice/reshape/transpose "
                     "chains into one strided copy (default on)"),
      llvm::cl::init(true)};
  // graph-fuse-bias-grad (a linear's dW and db in one GEMM call); off only
  // to compare against the separate reduce_sum.
  Option<bool> fuseBiasGrad{
      *this, "fuse-bias-grad",
      llvm::cl::desc("A weight-gradient GEMM and the bias gradient of the "
                     "same dY as one graph.matmul_bias_grad (default on)"),
      llvm::cl::init(true)};
  // graph-fuse-embedding-grad-sum (a tied table's two gradients summed
  // inside embedding_backward); off only to compare against the add.
  Option<bool> fuseEmbeddingGradSum{
      *this, "fuse-embedding-grad-sum",
      llvm::cl::desc("An embedding_backward and the add of another gradient "
                     "of the same table as one embedding_backward with "
                     "init (default on)"),
      llvm::cl::init(true)};
  // graph-pad-classes (an LM head's class count padded to 16 bytes, for
  // cuBLASLt's aligned kernels). `ampc compile --target=cuda` turns it on;
  // the CPU's GEMMs gain nothing from it.
  Option<bool> padClasses{
      *this, "pad-classes",
      llvm::cl::desc("Pad the class count of a linear feeding "
                     "cross_entropy_with_grad to 16 bytes: zero weight rows, "
                     "-inf bias (default off; ampc compile turns it on for "
                     "the CUDA target)"),
      llvm::cl::init(false)};
  // train-half-grads (weight gradients leave the step in the AMP type; the
  // epilogue widens them). `ampc compile --target=cuda` turns it on; on the
  // CPU the widening costs what the casts did.
  Option<bool> halfGrads{
      *this, "half-grads",
      llvm::cl::desc("Return the half weight gradients autodiff casts to "
                     "FP32 as they are; the runtime widens them (default "
                     "off; ampc compile turns it on for the CUDA target)"),
      llvm::cl::init(false)};
  // graph-fuse-gemm-gelu (the tanh GELU and its derivative in the GEMM's
  // epilogue). Off by default: it rounds once where PyTorch rounds twice.
  Option<bool> fuseGemmGelu{
      *this, "fuse-gemm-gelu",
      llvm::cl::desc("A linear and its tanh GELU, and the GEMM before "
                     "gelu_backward, as one GEMM with a GELU epilogue; the "
                     "GELU rounds once, so f16/bf16 values can differ from "
                     "PyTorch's in the last bit (default off)"),
      llvm::cl::init(false)};
  // train-half-weight-copies (the epilogue writes the half weights the next
  // step reads); off only to compare against the per-step casts.
  Option<bool> halfWeightCopies{
      *this, "half-weight-copies",
      llvm::cl::desc("The step reads half weight copies the fused epilogue "
                     "writes instead of casting the masters (default on)"),
      llvm::cl::init(true)};
  // graph-fuse-packed-attention (attention on the packed qkv projection,
  // no copies around it); off only to compare against the copies.
  Option<bool> fusePackedAttention{
      *this, "fuse-packed-attention",
      llvm::cl::desc("Attention reading q, k, v from the packed qkv "
                     "projection as one graph.packed_attention (default on)"),
      llvm::cl::init(true)};
  // kernel-hoist-grads (each gradient finished right after its operands);
  // off only to compare against the step order autodiff left.
  Option<bool> hoistGrads{
      *this, "hoist-grads",
      llvm::cl::desc("Finish each FP32 gradient as soon as its operands "
                     "exist, not after the whole backward (default on)"),
      llvm::cl::init(true)};
  // kernel-fuse-residual-norm (the residual add inside layer_norm, forward
  // and backward); off only to compare against the separate loops.
  Option<bool> fuseResidualNorm{
      *this, "fuse-residual-norm",
      llvm::cl::desc("A residual add and the layer_norm of its sum (and "
                     "layer_norm_backward and the add of its dx) as one row "
                     "kernel each (default on)"),
      llvm::cl::init(true)};
  // graph-save-attention-stats (attention's backward reads the forward's
  // result and softmax statistics); off only to compare against the
  // backward that recomputes them.
  Option<bool> saveAttentionStats{
      *this, "save-attention-stats",
      llvm::cl::desc("Attention's forward saves its softmax statistics for "
                     "the backward, which reads them (default on)"),
      llvm::cl::init(true)};
  // graph-fuse-cross-entropy (the loss and the logits' gradient in one
  // pass over the logits); off only to compare against the two ops.
  Option<bool> fuseCrossEntropy{
      *this, "fuse-cross-entropy",
      llvm::cl::desc("cross_entropy and its backward as one pass over the "
                     "logits, the gradient written over them (default on)"),
      llvm::cl::init(true)};
};

// The loss-scale mode after defaults: dynamic for fp16, none otherwise.
std::string effectiveLossScale(const TrainPipelineOptions &options);

// "" when the options are valid, else a message naming the bad one.
std::string validate(const TrainPipelineOptions &options);

// Autocast (unless amp is off), autodiff, the training step and its fused
// epilogue, CSE (one cast per parameter and step), elementwise fusion and
// the memory plan. The options must be valid (validate()).
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainPipelineOptions &options);

} // namespace ampc

#endif
