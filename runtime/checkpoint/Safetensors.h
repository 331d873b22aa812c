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

// The file's bytes (deterministic: same tensors + metadata, same bytes).
std::string encodeSafetensors(const std::vector<F32Tensor> &tensors,
                              const std::map<std::string, std::string> &meta);

struct LoadedTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::map<std::string, LoadedTensor> tensors;
};

// Reads an F32-only safetensors file; throws InputError naming |path|.
SafetensorsFile readSafetensors(const std::string &path);
// The same on the file's bytes, already read (|path| names it in errors).
SafetensorsFile decodeSafetensors(const std::string &path,
                                  const std::vector<uint8_t> &bytes);

} // namespace ampc::rt

#endif
