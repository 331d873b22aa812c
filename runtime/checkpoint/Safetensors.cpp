//===- Safetensors.cpp - Writing and reading safetensors files -----------===//
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/Array.h"
#include "runtime/data/DataError.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <tuple>

namespace ampc::rt {

using json = nlohmann::ordered_json;

static int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string encodeSafetensors(const std::vector<F32Tensor> &tensors,
                              const std::map<std::string, std::string> &meta,
                              const std::vector<I64Tensor> &ints) {
  json header = json::object();
  if (!meta.empty()) {
    json m = json::object();
    for (auto &[k, v] : meta)
      m[k] = v;
    header["__metadata__"] = m;
  }
  uint64_t offset = 0;
  for (const F32Tensor &t : tensors) {
    uint64_t bytes = uint64_t(product(t.shape)) * 4;
    header[t.name] = {{"dtype", "F32"},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  for (const I64Tensor &t : ints) {
    uint64_t bytes = uint64_t(product(t.shape)) * 8;
    header[t.name] = {{"dtype", "I64"},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t len = h.size();
  for (int i = 0; i < 8; ++i)
    out[i] = char((len >> (8 * i)) & 0xff);
  out += h;
  out.reserve(out.size() + offset);
  for (const F32Tensor &t : tensors) // host is little-endian, as the format
    out.append(reinterpret_cast<const char *>(t.data),
               size_t(product(t.shape)) * 4);
  for (const I64Tensor &t : ints)
    out.append(reinterpret_cast<const char *>(t.data),
               size_t(product(t.shape)) * 8);
  return out;
}

SafetensorsFile readSafetensors(const std::string &path) {
  return decodeSafetensors(path, data::readFileBytes(path));
}

// Elements of |shape|, or -1 for a negative dimension or a product past
// |limit| (no overflow on hostile shapes).
static int64_t checkedProduct(const std::vector<int64_t> &shape,
                              uint64_t limit) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > limit / uint64_t(d))
      return -1;
    n *= uint64_t(d);
  }
  return int64_t(n);
}

SafetensorsFile decodeSafetensors(const std::string &path,
                                  const std::vector<uint8_t> &b) {
  if (b.size() < 8)
    fail(path, "truncated safetensors file");
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i)
    len |= uint64_t(b[i]) << (8 * i);
  if (len > b.size() - 8)
    fail(path, "truncated safetensors header");
  json header;
  try {
    header = json::parse(b.begin() + 8, b.begin() + 8 + int64_t(len));
  } catch (const json::exception &e) {
    fail(path, std::string("bad safetensors header: ") + e.what());
  }
  if (!header.is_object())
    fail(path, "bad safetensors header: not a JSON object");
  SafetensorsFile f;
  size_t base = 8 + size_t(len);
  const uint64_t body = b.size() - base;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (auto &[name, v] : header.items()) {
    if (name == "__metadata__") {
      if (!v.is_object())
        fail(path, "bad safetensors header: __metadata__ is not an object");
      for (auto &[k, s] : v.items())
        f.metadata[k] = s.is_string() ? s.get<std::string>() : s.dump();
      continue;
    }
    try {
      const bool i64 = v.at("dtype") == "I64";
      if (v.at("dtype") != "F32" && !i64)
        fail(path, "tensor '" + name + "' has dtype " +
                       v.at("dtype").dump() + ", expected F32 (or I64)");
      const uint64_t esize = i64 ? 8 : 4;
      LoadedTensor t;
      t.shape = v.at("shape").get<std::vector<int64_t>>();
      int64_t elems = checkedProduct(t.shape, body / esize);
      if (elems < 0)
        fail(path, "tensor '" + name + "' has shape " +
                       v.at("shape").dump() + ", larger than the file" +
                       " or negative");
      auto offs = v.at("data_offsets").get<std::vector<uint64_t>>();
      uint64_t want = uint64_t(elems) * esize;
      if (offs.size() != 2 || offs[1] < offs[0] || offs[1] - offs[0] != want)
        fail(path, "tensor '" + name + "' has bad data_offsets");
      if (offs[1] > body)
        fail(path, "truncated: tensor '" + name + "' runs past the end");
      ranges.push_back({offs[0], offs[1], name});
      if (i64) {
        std::vector<int64_t> d(static_cast<size_t>(elems));
        if (want) // an empty vector's data() may be null
          std::memcpy(d.data(), b.data() + base + offs[0], size_t(want));
        f.ints.emplace(name, std::move(d));
        continue;
      }
      t.data.resize(size_t(want / 4));
      if (want)
        std::memcpy(t.data.data(), b.data() + base + offs[0], size_t(want));
      f.tensors.emplace(name, std::move(t));
    } catch (const json::exception &e) {
      fail(path, "bad safetensors entry '" + name + "': " + e.what());
    }
  }
  // The format's rule (and the reference library's check): the tensors
  // cover the data exactly, with no overlap and no hole, so that a file has
  // one reading.
  std::sort(ranges.begin(), ranges.end(), [](const Range &x, const Range &y) {
    return std::tie(x.begin, x.end, x.name) < std::tie(y.begin, y.end, y.name);
  });
  uint64_t at = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Range &r = ranges[i];
    if (r.begin < at)
      fail(path, "tensor '" + r.name + "' overlaps tensor '" +
                     ranges[i - 1].name + "' (data_offsets)");
    if (r.begin > at)
      fail(path, "bytes [" + std::to_string(at) + ", " +
                     std::to_string(r.begin) +
                     ") of the data belong to no tensor (data_offsets)");
    at = r.end;
  }
  if (at != body)
    fail(path, "bytes [" + std::to_string(at) + ", " + std::to_string(body) +
                   ") of the data belong to no tensor (trailing data)");
  return f;
}

} // namespace ampc::rt
