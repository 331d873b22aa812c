//===- Weights.h - Parameter values of an imported model --------*- C++ -*-===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_WEIGHTS_H
#define AMPC_COMPILER_IMPORT_ONNX_WEIGHTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::onnx {

// A parameter's initial value (FP32), in graph.param order.
struct Weight {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// Writes |weights| as a safetensors file; false with |error| on failure.
bool writeWeights(const std::string &path, const std::vector<Weight> &weights,
                  std::string &error);

} // namespace ampc::onnx

#endif
