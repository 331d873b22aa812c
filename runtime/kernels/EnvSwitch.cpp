//===- EnvSwitch.cpp - The kernel libraries' environment switches --------===//
#include "runtime/kernels/EnvSwitch.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ampc::kernels {

int envChoice(const char *name, std::initializer_list<std::string_view> values) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return 0;
  int i = 0;
  for (std::string_view allowed : values) {
    if (allowed == v)
      return i;
    ++i;
  }
  // 'a' or 'b'; 'a', 'b' or 'c'.
  std::string expected;
  i = 0;
  for (std::string_view allowed : values) {
    if (i > 0)
      expected += i + 1 == int(values.size()) ? " or " : ", ";
    expected += "'" + std::string(allowed) + "'";
    ++i;
  }
  std::fprintf(stderr, "error: %s=%s: expected %s\n", name, v,
               expected.c_str());
  std::exit(1);
}

bool envIs(const char *name, std::string_view value) {
  const char *v = std::getenv(name);
  return v && value == v;
}

} // namespace ampc::kernels
