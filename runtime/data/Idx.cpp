//===- Idx.cpp - IDX files (MNIST, Fashion-MNIST) ------------------------===//
//
// Layout: two zero bytes, a type byte (0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32,
// 0x0D f32, 0x0E f64), the rank, one big-endian u32 per dim, then
// big-endian data. `.gz` files are inflated by readFileBytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/Array.h"
#include "runtime/data/DataError.h"

#include <algorithm>

namespace ampc::rt::data {

Array readIdx(const std::string &path) {
  std::vector<uint8_t> b = readFileBytes(path);
  if (b.size() < 4 || b[0] != 0 || b[1] != 0)
    fail(path, "bad magic: not an IDX file");
  Array a;
  a.file = path;
  switch (b[2]) {
  case 0x08: a.elem = Elem::U8; a.fromIdxBytes = true; break;
  case 0x09: a.elem = Elem::I8; break;
  case 0x0B: a.elem = Elem::I16; break;
  case 0x0C: a.elem = Elem::I32; break;
  case 0x0D: a.elem = Elem::F32; break;
  case 0x0E: a.elem = Elem::F64; break;
  default:
    fail(path, "bad magic: unknown IDX type byte " + std::to_string(b[2]));
  }
  int rank = b[3];
  if (rank == 0)
    fail(path, "IDX file of rank 0 has no samples");
  size_t start = 4 + 4 * size_t(rank);
  if (b.size() < start)
    fail(path, "truncated IDX header");
  for (int i = 0; i < rank; ++i) {
    const uint8_t *p = &b[4 + 4 * i];
    int64_t d = (int64_t(p[0]) << 24) | (int64_t(p[1]) << 16) |
                (int64_t(p[2]) << 8) | int64_t(p[3]);
    a.shape.push_back(d);
  }
  int size = elemSize(a.elem);
  size_t want = shapeBytes(path, a.shape, size), have = b.size() - start;
  if (have < want)
    fail(path, "truncated: shape needs " + std::to_string(want) +
                   " bytes of data, file has " + std::to_string(have));
  if (have > want)
    fail(path, std::to_string(have - want) + " unexpected bytes after the data");
  a.bytes.assign(b.begin() + start, b.end());
  if (size > 1) // big-endian to host (little-endian) order
    for (size_t i = 0; i < a.bytes.size(); i += size)
      std::reverse(a.bytes.begin() + i, a.bytes.begin() + i + size);
  return a;
}

} // namespace ampc::rt::data
