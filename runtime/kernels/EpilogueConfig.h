//===- EpilogueConfig.h - What the fused AMP epilogue fixes -----*- C++ -*-===//
//
// The compile-time shape of the fused epilogue (train.fused_epilogue): the
// optimizer, the loss-scale mode and the clipping compiled in. One struct
// for both epilogues (cpu::Epilogue, cuda::Epilogue), read from the model's
// rt::CompileConfig in one place. Plain data: the device epilogue takes it
// as a kernel argument.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELS_EPILOGUECONFIG_H
#define AMPC_RUNTIME_KERNELS_EPILOGUECONFIG_H

#include "runtime/Model.h"

#include <cstdint>

namespace ampc::kernels {

struct EpilogueConfig {
  enum class Optimizer : int32_t { Sgd, Adam, AdamW } optimizer =
      Optimizer::AdamW;
  enum class LossScale : int32_t { None, Static, Dynamic } lossScale =
      LossScale::Dynamic;
  bool clipNorm = false, clipValue = false, nesterov = false;
  // The type of the half weight copies both epilogues write
  // (CompileConfig::amp's; a tensor has one when its EpilogueTensor::half
  // is set). The device epilogue's gradient types are per tensor
  // (cuda::EpilogueTensor::gradType); the CPU epilogue's are FP32.
  rt::DType halfType = rt::DType::F16;

  // From the compiled-in configuration (rt::CompileConfig's spellings);
  // throws std::invalid_argument on an unknown optimizer or loss scale.
  static EpilogueConfig fromCompileConfig(const rt::CompileConfig &c);
};

} // namespace ampc::kernels

#endif
