//===- Npy.cpp - NumPy .npy files (format versions 1, 2 and 3) -----------===//
//
// Layout: "\x93NUMPY", major, minor, header length (u16 for v1, u32 for
// v2/v3), an ASCII Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (N, ...)}, then the raw C-order data.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/Array.h"
#include "runtime/data/DataError.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace ampc::rt::data {

// The value text after 'key': in the header dict.
static std::string dictValue(const std::string &file, const std::string &h,
                             const std::string &key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos)
    fail(file, "bad .npy header: no '" + key + "' entry");
  size_t colon = h.find(':', k);
  if (colon == std::string::npos)
    fail(file, "bad .npy header near '" + key + "'");
  size_t b = h.find_first_not_of(' ', colon + 1);
  if (b == std::string::npos)
    fail(file, "bad .npy header near '" + key + "'");
  if (h[b] == '(') {
    size_t e = h.find(')', b);
    if (e == std::string::npos)
      fail(file, "bad .npy header: unterminated shape");
    return h.substr(b, e - b + 1);
  }
  if (h[b] == '\'') {
    size_t e = h.find('\'', b + 1);
    if (e == std::string::npos)
      fail(file, "bad .npy header: unterminated string");
    return h.substr(b + 1, e - b - 1);
  }
  size_t e = h.find_first_of(",}", b);
  return h.substr(b, e - b);
}

static Elem parseDescr(const std::string &file, const std::string &d) {
  if (d.size() < 3)
    fail(file, "unsupported .npy dtype '" + d + "'");
  char order = d[0];
  std::string t = d.substr(1);
  if (order == '>' && t != "u1" && t != "i1" && t != "b1")
    fail(file, "big-endian .npy data ('" + d + "') is not supported");
  static const std::pair<const char *, Elem> kTypes[] = {
      {"u1", Elem::U8},  {"i1", Elem::I8},   {"b1", Elem::Bool},
      {"u2", Elem::U16}, {"i2", Elem::I16},  {"f2", Elem::F16},
      {"u4", Elem::U32}, {"i4", Elem::I32},  {"f4", Elem::F32},
      {"u8", Elem::U64}, {"i8", Elem::I64},  {"f8", Elem::F64}};
  for (auto &[name, elem] : kTypes)
    if (t == name)
      return elem;
  fail(file, "unsupported .npy dtype '" + d +
                 "' (want u1/i1/b1/u2/i2/f2/u4/i4/f4/u8/i8/f8)");
}

// A Python tuple of integers, as numpy writes and reads it: "()", "(5,)",
// "(3, 4)", "(3, 4,)" (numpy refuses "(5)", an integer, and "(3 4)").
static std::vector<int64_t> parseShape(const std::string &file,
                                       const std::string &s) {
  auto bad = [&] {
    std::string shown = s; // one line, whatever the header held
    std::replace_if(
        shown.begin(), shown.end(),
        [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); },
        ' ');
    fail(file,
         "bad .npy header: shape " + shown + " is not a tuple of integers");
  };
  if (s.empty() || s[0] != '(')
    bad();
  std::vector<int64_t> shape;
  bool trailingComma = false;
  size_t i = 1; // after '('
  auto skipSpaces = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
  };
  for (skipSpaces(); i < s.size() && s[i] != ')'; skipSpaces()) {
    size_t e = i;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])))
      ++e;
    if (e == i)
      bad();
    int64_t d = 0;
    if (std::from_chars(s.data() + i, s.data() + e, d).ec != std::errc())
      fail(file, "shape too large: dimension " + s.substr(i, e - i));
    shape.push_back(d);
    while (e < s.size() && s[e] == 'L') // Python 2 longs
      ++e;
    i = e;
    skipSpaces();
    trailingComma = i < s.size() && s[i] == ',';
    if (trailingComma)
      ++i;
    else if (i < s.size() && s[i] != ')')
      bad();
  }
  if (shape.size() == 1 && !trailingComma)
    bad();
  return shape;
}

Array readNpy(const std::string &path) {
  std::vector<uint8_t> bytes = readFileBytes(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    fail(path, "bad magic: not a .npy file");
  int major = bytes[6];
  size_t headerLen, start;
  if (major == 1) {
    headerLen = bytes[8] | (size_t(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      fail(path, "truncated .npy header");
    headerLen = bytes[8] | (size_t(bytes[9]) << 8) |
                (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    start = 12;
  } else {
    fail(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < start + headerLen)
    fail(path, "truncated .npy header");
  std::string header(bytes.begin() + start, bytes.begin() + start + headerLen);

  Array a;
  a.file = path;
  a.elem = parseDescr(path, dictValue(path, header, "descr"));
  a.shape = parseShape(path, dictValue(path, header, "shape"));
  if (a.shape.empty())
    fail(path, "a 0-d .npy array has no samples (dim 0 is the sample dim)");
  size_t want = shapeBytes(path, a.shape, elemSize(a.elem));
  if (dictValue(path, header, "fortran_order").find("True") !=
          std::string::npos &&
      a.shape.size() > 1)
    fail(path, "Fortran-order .npy arrays are not supported (save with "
               "np.ascontiguousarray)");
  size_t have = bytes.size() - start - headerLen;
  if (have < want)
    fail(path, "truncated: shape needs " + std::to_string(want) +
                   " bytes of data, file has " + std::to_string(have));
  if (have > want)
    fail(path, std::to_string(have - want) +
                   " unexpected bytes after the data (header shape wrong?)");
  a.bytes.assign(bytes.begin() + start + headerLen, bytes.end());
  return a;
}

} // namespace ampc::rt::data
