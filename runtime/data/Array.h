//===- Array.h - Arrays read from data files ---------------------*- C++ -*-===//
//
// The readers return the file's elements in their own type (little-endian,
// host order) with the file's shape; Dataset converts them to each input's
// dtype.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_DATA_ARRAY_H
#define AMPC_RUNTIME_DATA_ARRAY_H

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::rt::data {

enum class Elem { U8, I8, U16, I16, U32, I32, U64, I64, F16, F32, F64, Bool };

const char *elemName(Elem e); // numpy-style: "u1", "f4", ...
int elemSize(Elem e);
bool isFloatElem(Elem e);

// Element i as a double (exact for every type except large 64-bit ints).
double elemAt(Elem e, const uint8_t *data, int64_t i);

struct Array {
  std::string file;
  Elem elem = Elem::U8;
  std::vector<int64_t> shape; // shape[0] = number of samples
  std::vector<uint8_t> bytes; // shape product * elemSize, host order
  bool fromIdxBytes = false;  // IDX u8: scaled by 1/255 into float inputs
};

// Reads a whole file, transparently gunzipping .gz (zlib). Throws InputError.
std::vector<uint8_t> readFileBytes(const std::string &path);

// The bytes of |shape| elements of |elemBytes| each; throws InputError
// naming |path| when the product does not fit in 64 bits (a header's dims
// could otherwise wrap to the size of a small file).
size_t shapeBytes(const std::string &path, const std::vector<int64_t> &shape,
                  int elemBytes);

Array readNpy(const std::string &path);
Array readIdx(const std::string &path);
// A raw token stream: shape = {count}.
Array readTokens(const std::string &path, Elem tokenType);

enum class Format { Npy, Idx, Tokens };
// By extension: .npy; .idx, -ubyte, *.gz (IDX); .bin, .txt, .tok (tokens).
// Throws InputError for anything else.
Format detectFormat(const std::string &path);

} // namespace ampc::rt::data

#endif
