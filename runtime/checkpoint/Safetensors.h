//===- Safetensors.h - The safetensors file format --------------*- C++ -*-===//
//
// u64 little-endian header length, a JSON header
//   {"__metadata__": {"k": "v", ...}, "name": {"dtype": "F32", "shape": [..],
//    "data_offsets": [begin, end]}, ...}
// padded with spaces to a multiple of 8 bytes, then the tensor bytes, packed
// in the order given. Readable by the `safetensors` Python package and
// PyTorch (safetensors.torch.load_file).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CHECKPOINT_SAFETENSORS_H
#define AMPC_RUNTIME_CHECKPOINT_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampc::rt {

struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  const float *data = nullptr; // shape product elements
};

// An int64 tensor (batch_norm's num_batches_tracked).
struct I64Tensor {
  std::string name;
  std::vector<int64_t> shape;
  const int64_t *data = nullptr;
};

// The file's bytes (deterministic: same tensors + metadata, same bytes).
// |ints| follow the F32 tensors, as dtype I64.
std::string encodeSafetensors(const std::vector<F32Tensor> &tensors,
                              const std::map<std::string, std::string> &meta,
                              const std::vector<I64Tensor> &ints = {});

struct LoadedTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::map<std::string, LoadedTensor> tensors;
  // I64 tensors, kept apart (batch_norm's num_batches_tracked).
  std::map<std::string, std::vector<int64_t>> ints;
};

// Reads a safetensors file of F32 (and I64) tensors; throws InputError
// naming |path|.
SafetensorsFile readSafetensors(const std::string &path);
// The same on the file's bytes, already read (|path| names it in errors).
SafetensorsFile decodeSafetensors(const std::string &path,
                                  const std::vector<uint8_t> &bytes);

} // namespace ampc::rt

#endif
