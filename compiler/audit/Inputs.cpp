//===- Inputs.cpp - The weights and batches an audit runs on --------------===//
#include "compiler/audit/Inputs.h"

#include "compiler/interp/GradCheck.h"
#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/DataError.h"
#include "runtime/data/Dataset.h"
#include "runtime/numerics/Philox.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace ampc;
using namespace ampc::audit;
using interp::ElemType;
using interp::Tensor;

interp::NamedTensors ampc::audit::initialWeights(graph::ModelOp model,
                                                 uint64_t seed) {
  interp::NamedTensors weights;
  for (Operation &op : model.getBlock()) {
    auto p = dyn_cast<graph::ParamOp>(op);
    if (!p)
      continue;
    interp::Shape shape = interp::shapeOf(p.getType());
    num::InitSpec spec =
        num::resolveInit(interp::initAttrsOf(p.getInit()), std::span(shape));
    std::vector<float> values(size_t(interp::numElements(shape)));
    // As cpu::HostModel::initialize fills the masters.
    num::fillInit(spec, seed, num::streamId(p.getName()), values);
    weights[p.getName().str()] = Tensor::floats(
        shape, std::vector<double>(values.begin(), values.end()));
  }
  return weights;
}

std::optional<interp::NamedTensors>
ampc::audit::loadWeights(graph::ModelOp model, const std::string &path,
                         bool checkpoint, std::string &error) {
  try {
    std::string file = path;
    if (checkpoint)
      file = rt::resolveCheckpoint(path) + "/model.safetensors";
    rt::SafetensorsFile st = rt::readSafetensors(file);
    interp::NamedTensors weights;
    for (Operation &op : model.getBlock()) {
      auto p = dyn_cast<graph::ParamOp>(op);
      if (!p)
        continue;
      std::string name = p.getName().str();
      interp::Shape shape = interp::shapeOf(p.getType());
      auto it = st.tensors.find(name);
      if (it == st.tensors.end())
        rt::fail(file, "no tensor \"" + name + "\" (a parameter of @" +
                           model.getSymName().str() + ")");
      if (it->second.shape != shape)
        rt::fail(file, "tensor \"" + name + "\" has shape " +
                           interp::shapeToString(it->second.shape) +
                           ", the model's parameter " +
                           interp::shapeToString(shape));
      weights[name] =
          Tensor::floats(shape, std::vector<double>(it->second.data.begin(),
                                                    it->second.data.end()));
    }
    return weights;
  } catch (const rt::InputError &e) {
    error = e.what();
    return std::nullopt;
  }
}

std::optional<double>
ampc::audit::checkpointLossScale(const std::string &path) {
  try {
    std::string file = rt::resolveCheckpoint(path) + "/train_state.json";
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer)
      return std::nullopt;
    llvm::Expected<llvm::json::Value> doc =
        llvm::json::parse((*buffer)->getBuffer());
    if (!doc) {
      llvm::consumeError(doc.takeError());
      return std::nullopt;
    }
    if (const llvm::json::Object *o = doc->getAsObject())
      if (const llvm::json::Object *scaler = o->getObject("scaler"))
        if (std::optional<double> scale = scaler->getNumber("scale"))
          if (*scale > 0 && std::isfinite(*scale))
            return scale;
  } catch (const rt::InputError &) {
  }
  return std::nullopt;
}

namespace {

rt::DType dtypeOf(ElemType t) {
  switch (t) {
  case ElemType::F32:
    return rt::DType::F32;
  case ElemType::F16:
    return rt::DType::F16;
  case ElemType::BF16:
    return rt::DType::BF16;
  case ElemType::I32:
    return rt::DType::I32;
  case ElemType::I64:
    return rt::DType::I64;
  }
  return rt::DType::F32;
}

// One input of a batch, from the bytes the runtime's Batcher gathered (in
// the input's dtype).
Tensor toTensor(const rt::TensorInfo &info, ElemType type,
                const std::vector<uint8_t> &bytes) {
  Tensor t(info.shape, type);
  int64_t n = t.size();
  for (int64_t k = 0; k < n; ++k) {
    const uint8_t *p = bytes.data() + k * rt::data::dtypeSize(info.dtype);
    switch (type) {
    case ElemType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      t.f[k] = v;
      break;
    }
    case ElemType::F16: {
      _Float16 v;
      std::memcpy(&v, p, 2);
      t.f[k] = double(v);
      break;
    }
    case ElemType::BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      uint32_t w = uint32_t(b) << 16;
      float v;
      std::memcpy(&v, &w, 4);
      t.f[k] = v;
      break;
    }
    case ElemType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      t.i[k] = v;
      break;
    }
    case ElemType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      t.i[k] = v;
      break;
    }
    }
  }
  return t;
}

} // namespace

std::optional<std::vector<interp::NamedTensors>>
ampc::audit::loadBatches(graph::ModelOp model,
                         const std::vector<std::string> &items, int64_t count,
                         uint64_t seed, std::string &error) {
  std::vector<rt::TensorInfo> infos;
  std::vector<ElemType> types;
  for (Operation &op : model.getBlock())
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      rt::TensorInfo info;
      info.name = in.getName().str();
      types.push_back(interp::elemTypeOf(in.getType()));
      info.dtype = dtypeOf(types.back());
      info.shape = interp::shapeOf(in.getType());
      infos.push_back(std::move(info));
    }
  if (infos.empty() || infos.front().shape.empty()) {
    error = "the model has no batched input to read data into";
    return std::nullopt;
  }
  try {
    std::vector<rt::data::DataSpec> specs =
        rt::data::parseDataSpecs(items, "--data");
    rt::data::Dataset data =
        rt::data::loadDataset(infos, specs, /*context=*/0, "--data");
    // The order a training binary with this --seed walks the data in.
    rt::data::Batcher batcher(data, infos.front().shape[0], seed,
                              /*shuffle=*/true);
    std::vector<interp::NamedTensors> batches;
    std::vector<std::vector<uint8_t>> raw;
    for (int64_t b = 0; b < count; ++b) {
      batcher.next(raw);
      interp::NamedTensors batch;
      for (size_t k = 0; k < infos.size(); ++k)
        batch[infos[k].name] = toTensor(infos[k], types[k], raw[k]);
      batches.push_back(std::move(batch));
    }
    return batches;
  } catch (const rt::InputError &e) {
    error = e.what();
    return std::nullopt;
  }
}

std::vector<interp::NamedTensors>
ampc::audit::syntheticBatches(graph::ModelOp model, int64_t count,
                              uint64_t seed) {
  std::vector<interp::NamedTensors> batches;
  for (int64_t b = 0; b < count; ++b) {
    interp::NamedTensors all =
        interp::makeRandomBindings(model, seed + uint64_t(b));
    interp::NamedTensors inputs;
    for (Operation &op : model.getBlock())
      if (auto in = dyn_cast<graph::InputOp>(op))
        inputs[in.getName().str()] = all[in.getName().str()];
    batches.push_back(std::move(inputs));
  }
  return batches;
}
