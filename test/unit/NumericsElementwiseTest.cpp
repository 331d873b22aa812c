//===- NumericsElementwiseTest.cpp - runtime/numerics/Elementwise.h -------===//
//
// The shared formulas in float must be bit for bit the hand-written float
// expressions the kernel libraries and emitters used before they shared
// them (written out below), and the double instantiation (the interpreter's
// FP64 reference) must agree with them to float accuracy.
//
//===----------------------------------------------------------------------===//
#include "runtime/numerics/Elementwise.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace ampc;

// The formulas as runtime/cpu/Elementwise.cpp spelled them, with glibc's
// tanhf since replaced by the host's own (runtime/numerics/Tanh.h).
float oldSigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float oldRsqrt(float x) { return 1.0f / std::sqrt(x); }
float oldGeluErf(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f));
}
float oldGeluTanh(float x) {
  float inner = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + num::tanhFloat(inner));
}
float oldGeluErfGrad(float x, float g) {
  float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752440f));
  float pdf = 0.39894228040143267794f * std::exp(-0.5f * x * x);
  return g * (cdf + x * pdf);
}
float oldGeluTanhGrad(float x, float g) {
  const float k = 0.044715f, c = 0.79788456080286535588f;
  float x2 = x * x;
  float t = num::tanhFloat(c * (x + k * x2 * x));
  float left = 0.5f * x, right = 1.0f + t;
  float dright = left * (1.0f - t * t) * c * (1.0f + 3.0f * k * x2);
  return g * (0.5f * right + dright);
}

std::vector<float> samples() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 3.5f, -7.25f, 1e-30f,
                          -1e-30f, 20.0f, -20.0f, 1e30f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 3.0f);
  for (int i = 0; i < 4000; ++i)
    v.push_back(d(rng));
  return v;
}

// Same bits (NaN: both NaN).
void expectSame(float a, float b, float x) {
  if (std::isnan(a) && std::isnan(b))
    return;
  EXPECT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b))
      << "x = " << x << ": " << a << " vs " << b;
}

TEST(NumericsElementwise, FloatIsThePreviousFormulasBitForBit) {
  for (float x : samples()) {
    float g = 0.75f - x * 0.125f;
    expectSame(num::sigmoid(x), oldSigmoid(x), x);
    expectSame(num::rsqrt(x), oldRsqrt(x), x);
    expectSame(num::geluErf(x), oldGeluErf(x), x);
    expectSame(num::geluTanh(x), oldGeluTanh(x), x);
    expectSame(num::geluErfGrad(x, g), oldGeluErfGrad(x, g), x);
    expectSame(num::geluTanhGrad(x, g), oldGeluTanhGrad(x, g), x);
    expectSame(num::relu(x), x > 0.0f ? x : 0.0f, x);
    expectSame(num::reluGrad(x, g), x > 0.0f ? g : 0.0f, x);
    expectSame(num::power(x, 2.0f), x * x, x);
    expectSame(num::power(x, 3.0f), std::pow(x, 3.0f), x);
  }
}

TEST(NumericsElementwise, ReluKeepsNaNAndItsGradientDropsIt) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(num::relu(nan)));
  EXPECT_TRUE(std::isnan(num::relu(double(nan))));
  EXPECT_EQ(num::reluGrad(nan, 1.0f), 0.0f);
  EXPECT_EQ(num::relu(-0.0f), 0.0f);
}

TEST(NumericsElementwise, DoubleAgreesWithFloat) {
  for (float x : samples()) {
    if (!std::isfinite(x) || std::fabs(x) > 30.0f)
      continue;
    double g = 0.75 - double(x) * 0.125;
    auto near = [&](double d, float f) {
      EXPECT_NEAR(d, double(f), 1e-6 + 1e-5 * std::fabs(d)) << "x = " << x;
    };
    near(num::geluErf(double(x)), num::geluErf(x));
    near(num::geluTanh(double(x)), num::geluTanh(x));
    near(num::geluErfGrad(double(x), g), num::geluErfGrad(x, float(g)));
    near(num::geluTanhGrad(double(x), g), num::geluTanhGrad(x, float(g)));
    near(num::sigmoid(double(x)), num::sigmoid(x));
  }
}

} // namespace
