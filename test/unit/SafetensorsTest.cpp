//===- SafetensorsTest.cpp - The safetensors codec's layout rules --------===//
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/DataError.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace ampc::rt;

namespace {

// A file of `body` bytes behind the JSON `header`.
std::vector<uint8_t> file(const std::string &header, size_t body) {
  std::vector<uint8_t> b(8 + header.size() + body, 0);
  for (int i = 0; i < 8; ++i)
    b[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  std::memcpy(b.data() + 8, header.data(), header.size());
  for (size_t i = 0; i < body; ++i)
    b[8 + header.size() + i] = uint8_t(i);
  return b;
}

std::string entry(const std::string &name, int elems, int begin) {
  return "\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[" +
         std::to_string(elems) + "],\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(begin + 4 * elems) +
         "]}";
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  try {
    decodeSafetensors("f.safetensors", bytes);
  } catch (const InputError &e) {
    return e.what();
  }
  return "";
}

TEST(Safetensors, EncodedFilesDecode) {
  std::vector<float> a = {1, 2, 3}, b = {4};
  std::vector<int64_t> n = {7};
  std::string s = encodeSafetensors({{"a", {3}, a.data()}, {"b", {}, b.data()}},
                                    {{"k", "v"}}, {{"n", {1}, n.data()}});
  SafetensorsFile f =
      decodeSafetensors("f", std::vector<uint8_t>(s.begin(), s.end()));
  EXPECT_EQ(f.tensors.at("a").data, a);
  EXPECT_EQ(f.tensors.at("b").data, b);
  EXPECT_EQ(f.ints.at("n"), n);
  EXPECT_EQ(f.metadata.at("k"), "v");
}

// Tensors in any header order, and an empty one, as long as they cover the
// data once.
TEST(Safetensors, TensorsCoverTheDataInAnyOrder) {
  SafetensorsFile f = decodeSafetensors(
      "f", file("{" + entry("b", 1, 8) + "," + entry("a", 2, 0) + "," +
                    entry("e", 0, 12) + "}",
                12));
  EXPECT_EQ(f.tensors.at("a").data.size(), 2u);
  EXPECT_EQ(f.tensors.at("b").data.size(), 1u);
  EXPECT_EQ(f.tensors.at("e").data.size(), 0u);
}

// The format's rule, as the reference library applies it: no byte read
// twice, none belonging to no tensor.
TEST(Safetensors, OverlapsHolesAndTrailingBytesAreRefused) {
  EXPECT_EQ(errorOf(file("{" + entry("a", 2, 0) + "," + entry("b", 2, 4) + "}",
                         12)),
            "f.safetensors: tensor 'b' overlaps tensor 'a' (data_offsets)");
  EXPECT_EQ(errorOf(file("{" + entry("a", 2, 0) + "," + entry("b", 2, 0) + "}",
                         8)),
            "f.safetensors: tensor 'b' overlaps tensor 'a' (data_offsets)");
  EXPECT_EQ(errorOf(file("{" + entry("a", 1, 0) + "," + entry("b", 1, 8) + "}",
                         12)),
            "f.safetensors: bytes [4, 8) of the data belong to no tensor "
            "(data_offsets)");
  EXPECT_EQ(errorOf(file("{" + entry("a", 1, 4) + "}", 8)),
            "f.safetensors: bytes [0, 4) of the data belong to no tensor "
            "(data_offsets)");
  EXPECT_EQ(errorOf(file("{" + entry("a", 1, 0) + "}", 12)),
            "f.safetensors: bytes [4, 12) of the data belong to no tensor "
            "(trailing data)");
  EXPECT_EQ(errorOf(file("{}", 4)),
            "f.safetensors: bytes [0, 4) of the data belong to no tensor "
            "(trailing data)");
  EXPECT_EQ(errorOf(file("{" + entry("a", 1, 8) + "}", 8)),
            "f.safetensors: truncated: tensor 'a' runs past the end");
}

} // namespace
