//===- Evaluate.h - Loss and accuracy over an eval set -----------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_EVALUATE_H
#define AMPC_RUNTIME_TRAIN_EVALUATE_H

#include "runtime/Model.h"
#include "runtime/data/Dataset.h"

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
EvalResult evaluateDataset(Model &model, const data::Dataset &data);

} // namespace ampc::rt

#endif
