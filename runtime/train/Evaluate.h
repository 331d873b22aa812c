//===- Evaluate.h - Loss and accuracy over an eval set -----------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_EVALUATE_H
#define AMPC_RUNTIME_TRAIN_EVALUATE_H

#include "runtime/Model.h"
#include "runtime/data/Dataset.h"

#include <functional>

namespace ampc::rt {

struct EvalResult {
  int64_t samples = 0;  // evaluated: all of the data
  // Samples the loss is the mean over: all of them, unless the last partial
  // batch cannot be masked (no input with an ignore_index to pad with).
  int64_t lossSamples = 0;
  double loss = 0;      // per-sample mean of outputs()[0]
  bool hasAccuracy = false;
  int64_t labels = 0;   // labels counted (those in [0, classes))
  double accuracy = 0;
};

// Sets rows [from, batch) of every integer input with an ignore_index (a
// cross_entropy or nll_loss label) to it, so a mean loss counts only rows
// [0, from). Returns false when the model has no such input (its loss
// cannot be masked). Evaluation and training's kept partial batch use it.
bool maskPaddedRows(const std::vector<TensorInfo> &inputs,
                    std::vector<std::vector<uint8_t>> &in, int64_t batch,
                    int64_t from);

// Whether maskPaddedRows can mask |inputs|' loss.
bool canMaskLoss(const std::vector<TensorInfo> &inputs);

// Runs Model::evaluate over |data| in order. Every sample counts: the last
// partial batch is padded (with copies of its samples) and masked: the
// padded rows of every integer input with an ignore_index (a cross_entropy
// label) are set to it, so the batch's loss is the mean over its real
// samples, and accuracy skips the padded rows. The loss is weighted per
// sample: sum(batch loss x real samples) / samples, the mean over the
// samples. (A model whose loss has no such input gets its loss over the
// full batches only, lossSamples says so; accuracy still counts all.)
// Accuracy is
// computed when the model has an output named `logits` [..., C] and an
// integer input shaped like logits without its last dim (preferring the
// names label, labels, targets, target): argmax(logits) == label (first
// maximum wins), over labels in [0, C) (so ignore_index -100 is ignored).
//
// Data parallel (|world| > 1): the batch B is per rank, a global batch is
// world*B consecutive samples and rank |rank| evaluates its slice
// [rank*B, (rank+1)*B) of each (of the last global batch, the real samples
// in it: none, some or all), so every sample is counted exactly once; |sum|
// adds doubles over the ranks so every rank returns the result one process
// would (up to the order of the sums).
EvalResult evaluateDataset(
    Model &model, const data::Dataset &data, int rank = 0, int world = 1,
    const std::function<void(double *, size_t)> &sum = nullptr);

} // namespace ampc::rt

#endif
