//===- EpilogueConfig.cpp - The epilogue's shape from CompileConfig -------===//
#include "runtime/kernels/EpilogueConfig.h"

#include <stdexcept>

namespace ampc::kernels {

EpilogueConfig EpilogueConfig::fromCompileConfig(const rt::CompileConfig &c) {
  EpilogueConfig e;
  if (c.optimizer == "sgd")
    e.optimizer = Optimizer::Sgd;
  else if (c.optimizer == "adam")
    e.optimizer = Optimizer::Adam;
  else if (c.optimizer == "adamw")
    e.optimizer = Optimizer::AdamW;
  else
    throw std::invalid_argument("unknown optimizer '" + c.optimizer + "'");
  if (c.lossScale == "none")
    e.lossScale = LossScale::None;
  else if (c.lossScale == "static")
    e.lossScale = LossScale::Static;
  else if (c.lossScale == "dynamic")
    e.lossScale = LossScale::Dynamic;
  else
    throw std::invalid_argument("unknown loss scale '" + c.lossScale + "'");
  e.clipNorm = c.clipNorm;
  e.clipValue = c.clipValue;
  e.nesterov = c.nesterov;
  e.halfType = c.amp == "bf16" ? rt::DType::BF16 : rt::DType::F16;
  return e;
}

} // namespace ampc::kernels
