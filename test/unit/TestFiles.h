//===- TestFiles.h - Writing small data files for runtime tests --*- C++ -*-===//
#ifndef AMPC_TEST_UNIT_TESTFILES_H
#define AMPC_TEST_UNIT_TESTFILES_H

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace ampc::test {

// A fresh directory, removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "ampc-rt-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string &name) const {
    return path + "/" + name;
  }
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

template <class T> std::string rawBytes(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()),
                     v.size() * sizeof(T));
}

// A .npy file (format |version| 1 or 2) holding |data|.
// A .npy file whose header holds the dict literal |dict| as given.
inline std::string npyWithHeader(std::string dict, const std::string &data,
                                 int version = 1) {
  size_t pre = version == 1 ? 10 : 12;
  while ((pre + dict.size() + 1) % 64)
    dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(version);
  out += char(0);
  uint32_t len = uint32_t(dict.size());
  out += char(len & 0xff);
  out += char((len >> 8) & 0xff);
  if (version != 1) {
    out += char((len >> 16) & 0xff);
    out += char((len >> 24) & 0xff);
  }
  return out + dict + data;
}

inline std::string npyBytes(const std::string &descr,
                            const std::vector<int64_t> &shape,
                            const std::string &data, int version = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, "
                     "'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  return npyWithHeader(dict, data, version);
}

// An IDX file: |type| byte, dims, then |data| already big-endian.
inline std::string idxBytes(uint8_t type, const std::vector<uint32_t> &dims,
                            const std::string &data) {
  std::string out = {0, 0, char(type), char(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8)
      out += char((d >> s) & 0xff);
  return out + data;
}

inline void writeGzip(const std::string &path, const std::string &bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), unsigned(bytes.size()));
  gzclose(f);
}

} // namespace ampc::test

#endif
