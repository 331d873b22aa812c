//===- Weights.cpp - Initializer values -> safetensors
//----------------------===//
//
// The runtime's own encoder (runtime/checkpoint/Safetensors.cpp, compiled
// into this library: it needs no MLIR and no other runtime code), so the
// training binary's --init-weights reads exactly what it writes.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/Weights.h"
#include "runtime/checkpoint/Safetensors.h"

#include <fstream>

namespace ampc::onnx {

bool writeWeights(const std::string &path, const std::vector<Weight> &weights,
                  std::string &error) {
  std::vector<rt::F32Tensor> tensors;
  for (const Weight &w : weights)
    tensors.push_back({w.name, w.shape, w.data.data()});
  std::string bytes = rt::encodeSafetensors(tensors, {{"format", "pt"}});
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), std::streamsize(bytes.size()))) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

} // namespace ampc::onnx
