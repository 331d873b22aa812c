//===- InitWeights.h - Start training from given weights --------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_INITWEIGHTS_H
#define AMPC_RUNTIME_TRAIN_INITWEIGHTS_H

#include "runtime/Model.h"

#include <string>

namespace ampc::rt {

// --init-weights FILE: overwrites every parameter's master weight with the
// tensor of the same name in the safetensors file |path| (written by `ampc
// import --weights`, or a checkpoint's model.safetensors: training starts
// fresh from its weights; optimizer moments, which an older checkpoint kept
// in that file too, are ignored). Buffers (model state that is not a
// parameter, e.g. running statistics) are taken when the file has them.
// Call it after Model::initialize. A missing or mis-shaped parameter (or a
// mis-shaped buffer) throws InputError. Returns the file's batch_norm
// num_batches_tracked (the first of the model's counters the file has, an
// I64 scalar), 0 without one: the count continues from it, as in PyTorch.
int64_t loadInitWeights(const std::string &path, Model &model);

} // namespace ampc::rt

#endif
