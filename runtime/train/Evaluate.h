//===- Evaluate.h - Loss and accuracy over an eval set -----------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_EVALUATE_H
#define AMPC_RUNTIME_TRAIN_EVALUATE_H

#include "runtime/Model.h"
#include "runtime/data/Dataset.h"

#include <functional>

namespace ampc::rt {

struct EvalResult {
  int64_t samples = 0;  // evaluated
  int64_t dropped = 0;  // the last partial batch
  double loss = 0;      // mean of outputs()[0] over the batches
  bool hasAccuracy = false;
  int64_t labels = 0;   // labels counted (those in [0, classes))
  double accuracy = 0;
};

// Runs Model::evaluate over |data| in order, in whole batches. Accuracy is
// computed when the model has an output named `logits` [..., C] and an
// integer input shaped like logits without its last dim (preferring the
// names label, labels, targets, target): argmax(logits) == label (first
// maximum wins), over labels in [0, C) (so ignore_index -100 is ignored).
//
// Data parallel (|world| > 1): the batch B is per rank, a global batch is
// world*B consecutive samples and rank |rank| evaluates its slice
// [rank*B, (rank+1)*B) of each; |sum| adds doubles over the ranks so every
// rank returns the result one process at batch world*B would (up to the
// order of the sums).
EvalResult evaluateDataset(
    Model &model, const data::Dataset &data, int rank = 0, int world = 1,
    const std::function<void(double *, size_t)> &sum = nullptr);

} // namespace ampc::rt

#endif
