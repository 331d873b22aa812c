//===- Files.cpp - Reading files, element types, format detection --------===//
#include "runtime/data/Array.h"
#include "runtime/data/DataError.h"
#include "runtime/numerics/Half.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>

namespace ampc::rt::data {

const char *elemName(Elem e) {
  switch (e) {
  case Elem::U8: return "u1";
  case Elem::I8: return "i1";
  case Elem::U16: return "u2";
  case Elem::I16: return "i2";
  case Elem::U32: return "u4";
  case Elem::I32: return "i4";
  case Elem::U64: return "u8";
  case Elem::I64: return "i8";
  case Elem::F16: return "f2";
  case Elem::F32: return "f4";
  case Elem::F64: return "f8";
  case Elem::Bool: return "b1";
  }
  return "?";
}

int elemSize(Elem e) {
  switch (e) {
  case Elem::U8: case Elem::I8: case Elem::Bool: return 1;
  case Elem::U16: case Elem::I16: case Elem::F16: return 2;
  case Elem::U32: case Elem::I32: case Elem::F32: return 4;
  case Elem::U64: case Elem::I64: case Elem::F64: return 8;
  }
  return 1;
}

bool isFloatElem(Elem e) {
  return e == Elem::F16 || e == Elem::F32 || e == Elem::F64;
}

template <class T> static T load(const uint8_t *p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * int64_t(sizeof(T)), sizeof(T));
  return v;
}

double elemAt(Elem e, const uint8_t *d, int64_t i) {
  switch (e) {
  case Elem::U8: return load<uint8_t>(d, i);
  case Elem::I8: return load<int8_t>(d, i);
  case Elem::Bool: return load<uint8_t>(d, i) != 0;
  case Elem::U16: return load<uint16_t>(d, i);
  case Elem::I16: return load<int16_t>(d, i);
  case Elem::U32: return load<uint32_t>(d, i);
  case Elem::I32: return load<int32_t>(d, i);
  case Elem::U64: return double(load<uint64_t>(d, i));
  case Elem::I64: return double(load<int64_t>(d, i));
  case Elem::F16: return double(load<num::half>(d, i));
  case Elem::F32: return load<float>(d, i);
  case Elem::F64: return load<double>(d, i);
  }
  return 0;
}

static bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

static void readInto(const std::string &path, std::vector<uint8_t> &out);

std::vector<uint8_t> readFileBytes(const std::string &path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    fail(path, "no such file");
  if (std::filesystem::is_directory(status))
    fail(path, "is a directory, expected a data file");
  // A FIFO blocks until a writer comes (and a dataset's file may be read
  // more than once), and a device (/dev/zero, also behind a .gz name) never
  // ends: only regular files.
  if (!std::filesystem::is_regular_file(status))
    fail(path, "is not a regular file (a FIFO, device or socket); expected "
               "a data file");
  std::vector<uint8_t> out;
  try {
    readInto(path, out);
  } catch (const std::bad_alloc &) { // a gzip that inflates past memory
    fail(path, "does not fit in memory (" + std::to_string(out.size()) +
                   " bytes inflated)");
  }
  return out;
}

static void readInto(const std::string &path, std::vector<uint8_t> &out) {
  if (endsWith(path, ".gz")) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
      fail(path, "cannot open");
    // Closed also when an InputError or bad_alloc leaves the loop.
    std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(f, gzclose);
    uint8_t buf[1 << 16];
    for (;;) {
      int n = gzread(f, buf, sizeof(buf));
      if (n < 0) {
        int code = 0;
        std::string msg = gzerror(f, &code);
        fail(path, "corrupt or truncated gzip data (" + msg + ")");
      }
      if (n == 0) {
        // An incomplete stream ends with 0 and Z_BUF_ERROR, not -1.
        int code = Z_OK;
        std::string msg = gzerror(f, &code);
        if (code != Z_OK && code != Z_STREAM_END)
          fail(path, "corrupt or truncated gzip data (" + msg + ")");
        break;
      }
      out.insert(out.end(), buf, buf + n);
    }
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, "cannot open (permission denied?)");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0)
    fail(path, "cannot determine its size");
  try {
    out.resize(size_t(size));
  } catch (const std::bad_alloc &) {
    fail(path, "is " + std::to_string(size) +
                   " bytes; cannot allocate that much memory");
  }
  in.seekg(0);
  if (!out.empty() && !in.read(reinterpret_cast<char *>(out.data()),
                               std::streamsize(out.size())))
    fail(path, "read error");
}

size_t shapeBytes(const std::string &path, const std::vector<int64_t> &shape,
                  int elemBytes) {
  uint64_t n = uint64_t(elemBytes);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return 0; // an empty array, whatever its other dims
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n) ||
        n > uint64_t(INT64_MAX))
      fail(path, "shape too large: its elements do not fit in 64-bit sizes");
  return size_t(n);
}

Format detectFormat(const std::string &path) {
  std::string p = path;
  for (char &c : p)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  if (endsWith(p, ".npy"))
    return Format::Npy;
  if (endsWith(p, ".gz"))
    p.resize(p.size() - 3); // IDX and token files may be gzipped
  if (endsWith(p, ".idx") || endsWith(p, "-ubyte") || endsWith(p, ".ubyte") ||
      p.find("-idx") != std::string::npos || p.find(".idx") != std::string::npos)
    return Format::Idx;
  if (endsWith(p, ".bin") || endsWith(p, ".txt") || endsWith(p, ".tok"))
    return Format::Tokens;
  fail(path, "unknown data format: expected .npy, IDX (.idx, -ubyte, "
             "optionally .gz) or a token file (.bin, .txt, .tok)");
}

Array readTokens(const std::string &path, Elem tokenType) {
  Array a;
  a.file = path;
  a.elem = tokenType;
  a.bytes = readFileBytes(path);
  int size = elemSize(tokenType);
  if (a.bytes.size() % size != 0)
    fail(path, "truncated: " + std::to_string(a.bytes.size()) +
                   " bytes is not a whole number of " + elemName(tokenType) +
                   " tokens");
  a.shape = {int64_t(a.bytes.size() / size)};
  return a;
}

} // namespace ampc::rt::data
