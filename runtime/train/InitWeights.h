//===- InitWeights.h - Start training from given weights --------*- C++ -*-===//
#ifndef AMPC_RUNTIME_TRAIN_INITWEIGHTS_H
#define AMPC_RUNTIME_TRAIN_INITWEIGHTS_H

#include "runtime/Model.h"

#include <string>

namespace ampc::rt {

// --init-weights FILE: overwrites every parameter's master weight with the
// tensor of the same name in the safetensors file |path| (written by `ampc
// import --weights`, or a checkpoint's model.safetensors: its optimizer
// moments are ignored, so training starts fresh from its weights). Call it
// after Model::initialize. A missing or mis-shaped tensor throws InputError.
void loadInitWeights(const std::string &path, Model &model);

} // namespace ampc::rt

#endif
