//===- InitWeights.cpp
//------------------------------------------------------===//
#include "runtime/train/InitWeights.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/DataError.h"

#include <algorithm>
#include <cstring>

namespace ampc::rt {

static std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t loadInitWeights(const std::string &path, Model &model) {
  SafetensorsFile f = readSafetensors(path);
  // Check every parameter before writing any: all or nothing.
  for (const ParamInfo &p : model.params()) {
    auto it = f.tensors.find(p.name);
    if (it == f.tensors.end())
      fail(path, "no tensor named '" + p.name + "' (a parameter of model '" +
                     model.name() + "')");
    if (it->second.shape != p.shape)
      fail(path, "tensor '" + p.name + "' has shape " +
                     shapeStr(it->second.shape) + ", the model's is " +
                     shapeStr(p.shape));
  }
  std::vector<StateTensor> state = model.stateTensors();
  for (const StateTensor &t : state) {
    auto it = f.tensors.find(t.name);
    if (!t.optimizer && it != f.tensors.end() && it->second.shape != t.shape)
      fail(path, "tensor '" + t.name + "' has shape " +
                     shapeStr(it->second.shape) + ", the model's is " +
                     shapeStr(t.shape));
  }
  for (StateTensor &t : state) {
    // Parameters (all present, checked above) and the buffers the file has.
    auto it = f.tensors.find(t.name);
    if (t.optimizer || it == f.tensors.end())
      continue;
    const LoadedTensor &src = it->second;
    std::memcpy(t.data, src.data.data(), src.data.size() * sizeof(float));
  }
  for (const std::string &c : model.batchCounters())
    if (auto it = f.ints.find(c); it != f.ints.end() && it->second.size() == 1)
      return it->second[0];
  return 0;
}

} // namespace ampc::rt
