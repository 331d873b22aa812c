//===- PipelineFlags.cpp - Options shared by `compile` and `cost` ---------===//
#include "compiler/cli/PipelineFlags.h"

#include "passes/Pipelines.h"

using namespace llvm;

namespace {

#define AMPC_PIPELINE_OPT(type, var, ...)                                      \
  cl::opt<type> var(__VA_ARGS__, cl::sub(ampc::cli::compileCommand()),         \
                    cl::sub(ampc::cli::costCommand()),                         \
                    cl::cat(ampc::cli::category()))

AMPC_PIPELINE_OPT(std::string, amp, "amp",
                  cl::desc("Mixed precision: off, fp16 or bf16 (default: off)"),
                  cl::init("off"));
AMPC_PIPELINE_OPT(std::string, optimizer, "optimizer",
                  cl::desc("sgd, adam or adamw (default: adamw)"),
                  cl::init("adamw"));
AMPC_PIPELINE_OPT(std::string, lossScale, "loss-scale",
                  cl::desc("dynamic, static:S or none (default: dynamic for "
                           "fp16, none for bf16 and off)"),
                  cl::init(""));
AMPC_PIPELINE_OPT(double, clipNorm, "clip-norm",
                  cl::desc("Clip gradients to this global norm (0: off; "
                           "default: 0)"),
                  cl::init(0.0));
AMPC_PIPELINE_OPT(double, clipValue, "clip-value",
                  cl::desc("Clip each gradient element to [-x, x] (0: off; "
                           "default: 0)"),
                  cl::init(0.0));
AMPC_PIPELINE_OPT(int, accumSteps, "accum-steps",
                  cl::desc("Micro-batches per optimizer step (default: 1)"),
                  cl::init(1));
AMPC_PIPELINE_OPT(bool, nesterov, "nesterov",
                  cl::desc("Nesterov momentum (sgd; default: off)"),
                  cl::init(false));
AMPC_PIPELINE_OPT(double, momentum, "momentum",
                  cl::desc("SGD momentum: the training binary's default "
                           "(its own --momentum overrides it); `ampc cost` "
                           "prices the momentum buffer when it is non-zero "
                           "(default: 0)"),
                  cl::init(0.0));
AMPC_PIPELINE_OPT(std::string, policy, "policy",
                  cl::desc("Autocast policy file (default: none, PyTorch's "
                           "CUDA autocast lists)"),
                  cl::init(""));

// The pass toggles. Those on by default are there to measure a step without
// one change (A/B runs); their help names what =false leaves.
AMPC_PIPELINE_OPT(bool, foldDataMovement, "fold-data-movement",
                  cl::desc("Transposes into GEMM flags, slice/reshape/"
                           "transpose chains into one strided copy (default "
                           "on; =false: the copies)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, fuseBiasGrad, "fuse-bias-grad",
                  cl::desc("dW and db of a linear in one GEMM call (default "
                           "on; =false: the bias gradient's own reduction)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, fuseEmbeddingGradSum, "fuse-embedding-grad-sum",
                  cl::desc("A tied table's two gradients summed inside "
                           "embedding_backward (default on; =false: the "
                           "zeroed table and the add)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, padClasses, "pad-classes",
                  cl::desc("Pad an LM head's class count (GPT-2's 50257) to "
                           "16 bytes with zero weight rows and a -inf bias, "
                           "so cuBLASLt's aligned GEMM kernels run; same loss "
                           "and gradients (default: on for --target=cuda, off "
                           "for cpu)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, halfGrads, "half-grads",
                  cl::desc("Under AMP, weight gradients leave the step in the "
                           "AMP type and the epilogue widens them as it reads "
                           "them (exact: same values, 96 fewer launches for "
                           "GPT-2); default: on for --target=cuda, off for "
                           "cpu"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, fuseGemmGelu, "fuse-gemm-gelu",
                  cl::desc("A linear's tanh GELU and its backward in the "
                           "GEMM's epilogue (cuBLASLt GELU_AUX_BIAS / DGELU): "
                           "one rounding where PyTorch rounds twice, so "
                           "f16/bf16 values can differ in the last bit "
                           "(default off)"),
                  cl::init(false));
AMPC_PIPELINE_OPT(bool, halfWeightCopies, "half-weight-copies",
                  cl::desc("Under AMP the fused epilogue writes the half "
                           "weights the next step reads (default on; =false: "
                           "the step casts each master itself)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, fusePackedAttention, "fuse-packed-attention",
                  cl::desc("Attention on the packed qkv projection (default "
                           "on; =false: the slices, transposes and concat)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, saveAttentionStats, "save-attention-stats",
                  cl::desc("Attention's forward saves its softmax statistics "
                           "for the backward, --target=cuda only (default on; "
                           "=false: the backward recomputes them)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, hoistGrads, "hoist-grads",
                  cl::desc("Each gradient finished as soon as its operands "
                           "exist (default on; =false: the order autodiff "
                           "left, casts at the end)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, fuseResidualNorm, "fuse-residual-norm",
                  cl::desc("The residual add inside layer_norm and its "
                           "gradient's add inside layer_norm_backward "
                           "(default on; =false: the separate loops)"),
                  cl::init(true));
AMPC_PIPELINE_OPT(bool, fuseCrossEntropy, "fuse-cross-entropy",
                  cl::desc("cross_entropy's loss and its gradient in one pass "
                           "over the logits, the gradient written over them "
                           "(default on; =false: the two ops)"),
                  cl::init(true));

} // namespace

void ampc::cli::applyPipelineFlags(TrainPipelineOptions &options, bool cuda) {
  options.amp = amp;
  options.optimizer = optimizer;
  options.lossScale = lossScale;
  options.clipNorm = clipNorm;
  options.clipValue = clipValue;
  options.accumSteps = accumSteps;
  options.nesterov = nesterov;
  if (momentum.getNumOccurrences()) // else the pipeline's default stands
    options.momentum = momentum;
  options.policy = policy;
  options.foldDataMovement = foldDataMovement;
  options.fuseBiasGrad = fuseBiasGrad;
  options.fuseEmbeddingGradSum = fuseEmbeddingGradSum;
  options.padClasses = givenOr(padClasses, cuda);
  options.halfGrads = givenOr(halfGrads, cuda);
  options.fuseGemmGelu = fuseGemmGelu;
  options.halfWeightCopies = halfWeightCopies;
  options.fusePackedAttention = fusePackedAttention;
  options.saveAttentionStats = saveAttentionStats && cuda;
  options.hoistGrads = hoistGrads;
  options.fuseResidualNorm = fuseResidualNorm;
  options.fuseCrossEntropy = fuseCrossEntropy;
}
