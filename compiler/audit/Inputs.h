//===- Inputs.h - The weights and batches an audit runs on ------*- C++ -*-===//
//
// The same values a training binary would start from: parameters from their
// seeded initializers (runtime/numerics/Init) or from a checkpoint's
// model.safetensors (runtime/checkpoint), batches read by the runtime's data
// readers (runtime/data: .npy, IDX, token files) in training order. Errors
// come back as one line naming the file, as the training binary prints them.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_AUDIT_INPUTS_H
#define AMPC_COMPILER_AUDIT_INPUTS_H

#include "compiler/interp/Interpreter.h"
#include "dialects/Graph/GraphOps.h"

#include <optional>
#include <string>
#include <vector>

namespace ampc::audit {

// Every parameter from its initializer, element i of P depending only on
// (seed, P's name, i): the training binary's weights before step 1.
interp::NamedTensors initialWeights(graph::ModelOp model, uint64_t seed);

// The parameters from a safetensors file: |path| is the file itself, or
// with |checkpoint| a checkpoint directory (or a --checkpoint-dir holding
// `latest`) whose model.safetensors is read. Every parameter must be there
// with its shape.
std::optional<interp::NamedTensors> loadWeights(graph::ModelOp model,
                                                const std::string &path,
                                                bool checkpoint,
                                                std::string &error);

// The loss scale a checkpoint's train_state.json holds (scaler.scale), if
// it has one.
std::optional<double> checkpointLossScale(const std::string &path);

// The first |count| batches a training binary run with --seed |seed| and
// --data |items| ("name=path[:tokentype]") would see.
std::optional<std::vector<interp::NamedTensors>>
loadBatches(graph::ModelOp model, const std::vector<std::string> &items,
            int64_t count, uint64_t seed, std::string &error);

// |count| batches of seeded random inputs (floats N(0, 1), integers in the
// range their consumers allow), batch b drawn with seed + b.
std::vector<interp::NamedTensors>
syntheticBatches(graph::ModelOp model, int64_t count, uint64_t seed);

} // namespace ampc::audit

#endif
