//===- SpecModel.h - A Model described by a ModelSpec -----------*- C++ -*-===//
//
// The part cpu::HostModel and cuda::DeviceModel share: Model's metadata
// accessors answered from the rt::ModelSpec the generated code passes up, and
// the names under which each parameter's state is checkpointed.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_SPECMODEL_H
#define AMPC_RUNTIME_SPECMODEL_H

#include "runtime/Model.h"

#include <utility>
#include <vector>

namespace ampc::rt {

class SpecModel : public Model {
public:
  explicit SpecModel(ModelSpec spec) : spec_(std::move(spec)) {}

  const std::string &name() const override { return spec_.name; }
  const std::vector<TensorInfo> &inputs() const override {
    return spec_.inputs;
  }
  const std::vector<ParamInfo> &params() const override {
    return spec_.params;
  }
  const std::vector<TensorInfo> &outputs() const override {
    return spec_.outputs;
  }
  const CompileConfig &config() const override { return spec_.config; }
  Hyper defaults() const override { return spec_.defaults; }
  std::vector<std::string> batchCounters() const override {
    return spec_.counters;
  }

protected:
  // Appends parameter |param|'s checkpointed tensors, named as PyTorch's
  // state_dict and optimizer state: the FP32 master |w|, then SGD's
  // momentum buffer |m| or Adam's exp_avg |m| and exp_avg_sq |v|.
  void addStateTensors(std::vector<StateTensor> &out, size_t param, float *w,
                       float *m, float *v) const {
    const std::string &n = spec_.params[param].name;
    const std::vector<int64_t> &shape = spec_.params[param].shape;
    out.push_back({n, shape, w});
    if (spec_.config.optimizer == "sgd") {
      out.push_back({.name = n + ".momentum_buffer", .shape = shape, .data = m,
                     .optimizer = true});
    } else {
      out.push_back({.name = n + ".exp_avg", .shape = shape, .data = m,
                     .optimizer = true});
      out.push_back({.name = n + ".exp_avg_sq", .shape = shape, .data = v,
                     .optimizer = true});
    }
  }

  // Appends buffer |k| (running statistics), stored at |data|.
  void addBufferTensor(std::vector<StateTensor> &out, size_t k,
                       float *data) const {
    const ParamInfo &b = spec_.buffers[k];
    out.push_back({.name = b.name, .shape = b.shape, .data = data, .perRank = true});
  }
  const ModelSpec spec_;
};

} // namespace ampc::rt

#endif
