//===- InitTest.cpp - torch.nn.init formulas and the Philox RNG -----------===//
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace ampc::num;

namespace {

std::vector<float> fill(const InitSpec &s, size_t n, uint64_t seed = 7,
                        uint64_t stream = 1) {
  std::vector<float> v(n);
  fillInit(s, seed, stream, v);
  return v;
}

double mean(const std::vector<float> &v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

double stddev(const std::vector<float> &v) {
  double m = mean(v), s = 0;
  for (float x : v)
    s += (x - m) * (x - m);
  return std::sqrt(s / v.size());
}

TEST(Philox, KnownAnswer) {
  // Random123's known-answer test for philox4x32-10 with zero key/counter.
  Philox4 r = philox4x32({0, 0, 0, 0}, 0);
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

TEST(Fans, LinearAndConv) {
  int64_t linear[] = {256, 784};
  EXPECT_EQ(computeFans(linear).fanIn, 784);
  EXPECT_EQ(computeFans(linear).fanOut, 256);
  int64_t conv[] = {16, 8, 3, 3};
  EXPECT_EQ(computeFans(conv).fanIn, 8 * 9);
  EXPECT_EQ(computeFans(conv).fanOut, 16 * 9);
}

TEST(Gain, MatchesTorch) {
  EXPECT_DOUBLE_EQ(calculateGain("linear"), 1.0);
  EXPECT_DOUBLE_EQ(calculateGain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(calculateGain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(calculateGain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(calculateGain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_LT(calculateGain("swish"), 0);
}

TEST(Resolve, KaimingUniformTorchLinearDefault) {
  // nn.Linear's default: kaiming_uniform_(a=sqrt(5)) gives bound 1/sqrt(fan_in).
  InitAttrs a;
  a.kind = "kaiming_uniform";
  a.a = std::sqrt(5.0);
  int64_t shape[] = {256, 784};
  InitSpec s = resolveInit(a, shape);
  EXPECT_EQ(s.kind, InitSpec::Uniform);
  EXPECT_NEAR(s.p1, 1.0 / std::sqrt(784.0), 1e-15);
  EXPECT_NEAR(s.p0, -1.0 / std::sqrt(784.0), 1e-15);
}

TEST(Resolve, KaimingNormalFanOutRelu) {
  InitAttrs a;
  a.kind = "kaiming_normal";
  a.mode = "fan_out";
  a.nonlinearity = "relu";
  int64_t shape[] = {16, 8, 3, 3};
  InitSpec s = resolveInit(a, shape);
  EXPECT_EQ(s.kind, InitSpec::Normal);
  EXPECT_NEAR(s.p1, std::sqrt(2.0) / std::sqrt(144.0), 1e-15);
}

TEST(Resolve, Xavier) {
  InitAttrs a;
  a.kind = "xavier_uniform";
  a.gain = 2.0;
  int64_t shape[] = {30, 10};
  InitSpec s = resolveInit(a, shape);
  EXPECT_NEAR(s.p1, 2.0 * std::sqrt(6.0 / 40.0), 1e-15);
  a.kind = "xavier_normal";
  s = resolveInit(a, shape);
  EXPECT_NEAR(s.p1, 2.0 * std::sqrt(2.0 / 40.0), 1e-15);
}

TEST(Fill, ConstantsAreExact) {
  InitAttrs a;
  a.kind = "constant";
  a.value = 0.25;
  int64_t shape[] = {5};
  for (float x : fill(resolveInit(a, shape), 5))
    EXPECT_EQ(x, 0.25f);
  a.kind = "ones";
  for (float x : fill(resolveInit(a, shape), 5))
    EXPECT_EQ(x, 1.0f);
}

TEST(Fill, UniformStaysInBoundsWithRightMoments) {
  InitSpec s{InitSpec::Uniform, -0.5, 1.5};
  auto v = fill(s, 200000);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -0.5f);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.5f);
  EXPECT_NEAR(mean(v), 0.5, 0.01);
  EXPECT_NEAR(stddev(v), 2.0 / std::sqrt(12.0), 0.01);
}

TEST(Fill, NormalMoments) {
  InitSpec s{InitSpec::Normal, 1.0, 0.02};
  auto v = fill(s, 200000);
  EXPECT_NEAR(mean(v), 1.0, 0.0005);
  EXPECT_NEAR(stddev(v), 0.02, 0.0005);
}

TEST(Fill, TruncNormalIsTruncated) {
  InitSpec s{InitSpec::TruncNormal, 0.0, 1.0, -0.5, 0.5};
  auto v = fill(s, 100000);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -0.5f);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 0.5f);
  // A standard normal truncated to [-0.5, 0.5] has std ~0.2838.
  EXPECT_NEAR(stddev(v), 0.2838, 0.005);
}

TEST(Fill, ReproducibleAndStreamDependent) {
  InitSpec s{InitSpec::Normal, 0.0, 1.0};
  EXPECT_EQ(fill(s, 64, 1, 5), fill(s, 64, 1, 5));
  EXPECT_NE(fill(s, 64, 1, 5), fill(s, 64, 2, 5));
  EXPECT_NE(fill(s, 64, 1, 5), fill(s, 64, 1, 6));
  EXPECT_NE(streamId("fc1.weight"), streamId("fc2.weight"));
}

TEST(Erfinv, InvertsErf) {
  for (double x : {-0.999, -0.5, -1e-8, 0.0, 0.3, 0.9, 0.999999})
    EXPECT_NEAR(std::erf(erfinv(x)), x, 1e-14) << x;
}

} // namespace
