//===- EnvSwitchTest.cpp - The kernel libraries' environment switches -----===//
//
// runtime/kernels/EnvSwitch.h reads every AMPC_CUDA_* / AMPC_CPU_* path
// switch: the default for unset or empty, the listed values by index, and
// for anything else the error message the switches printed before (exit 1).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/EnvSwitch.h"

#include <gtest/gtest.h>

#include <cstdlib>

using ampc::kernels::envChoice;
using ampc::kernels::envIs;

namespace {

constexpr const char *kVar = "AMPC_ENVSWITCH_TEST";

TEST(EnvSwitch, ChoiceDefaultsAndValues) {
  unsetenv(kVar);
  EXPECT_EQ(envChoice(kVar, {"auto", "math", "flash"}), 0);
  setenv(kVar, "", 1);
  EXPECT_EQ(envChoice(kVar, {"auto", "math", "flash"}), 0);
  setenv(kVar, "auto", 1);
  EXPECT_EQ(envChoice(kVar, {"auto", "math", "flash"}), 0);
  setenv(kVar, "math", 1);
  EXPECT_EQ(envChoice(kVar, {"auto", "math", "flash"}), 1);
  // Read at each call: a change is seen.
  setenv(kVar, "flash", 1);
  EXPECT_EQ(envChoice(kVar, {"auto", "math", "flash"}), 2);
  unsetenv(kVar);
}

TEST(EnvSwitchDeathTest, UnknownValueIsAnError) {
  setenv(kVar, "Flash", 1); // case matters
  EXPECT_EXIT(envChoice(kVar, {"auto", "math", "flash"}),
              testing::ExitedWithCode(1),
              "^error: AMPC_ENVSWITCH_TEST=Flash: expected 'auto', 'math' or "
              "'flash'\n$");
  setenv(kVar, "im2co", 1);
  EXPECT_EXIT(envChoice(kVar, {"cudnn", "im2col"}), testing::ExitedWithCode(1),
              "^error: AMPC_ENVSWITCH_TEST=im2co: expected 'cudnn' or "
              "'im2col'\n$");
  unsetenv(kVar);
}

TEST(EnvSwitch, IsOnlyTheExactValue) {
  unsetenv(kVar);
  EXPECT_FALSE(envIs(kVar, "copy"));
  setenv(kVar, "copy", 1);
  EXPECT_TRUE(envIs(kVar, "copy"));
  setenv(kVar, "copy2", 1);
  EXPECT_FALSE(envIs(kVar, "copy"));
  setenv(kVar, "", 1);
  EXPECT_FALSE(envIs(kVar, "copy"));
  unsetenv(kVar);
}

} // namespace
