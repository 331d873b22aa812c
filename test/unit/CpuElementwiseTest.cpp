//===- CpuElementwiseTest.cpp - elementwise kernels, cast, dropout --------===//
#include "test/unit/CpuKernelTestUtil.h"

#include "runtime/numerics/Dropout.h"
#include "runtime/numerics/Tanh.h"

namespace ampc::cpu::test {
namespace {

struct UnaryCase {
  const char *op;
  float (*f)(float);   // the float formula (rounded once afterwards)
  double (*ref)(double); // the exact function
  double lo, hi;
};

const UnaryCase kUnary[] = {
    {"graph.neg", [](float x) { return -x; }, [](double x) { return -x; }, -3, 3},
    {"graph.relu", [](float x) { return x > 0 ? x : 0.0f; },
     [](double x) { return x > 0 ? x : 0.0; }, -3, 3},
    {"graph.tanh", [](float x) { return num::tanhFloat(x); },
     [](double x) { return std::tanh(x); }, -3, 3},
    {"graph.sigmoid", [](float x) { return 1.0f / (1.0f + std::exp(-x)); },
     [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -6, 6},
    {"graph.exp", [](float x) { return std::exp(x); },
     [](double x) { return std::exp(x); }, -4, 4},
    {"graph.log", [](float x) { return std::log(x); },
     [](double x) { return std::log(x); }, 0.05, 9},
    {"graph.sqrt", [](float x) { return std::sqrt(x); },
     [](double x) { return std::sqrt(x); }, 0, 9},
    {"graph.rsqrt", [](float x) { return 1.0f / std::sqrt(x); },
     [](double x) { return 1.0 / std::sqrt(x); }, 0.05, 9},
    {"graph.gelu", [](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f)); },
     [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }, -4, 4},
};

TEST(CpuElementwise, UnaryExactAndAccurate) {
  for (const UnaryCase &c : kUnary)
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(std::string(c.op) + " " + name(t));
      Tensor x = randomTensor(t, {3, 37}, 11, c.lo, c.hi), y(t, {3, 37});
      run(c.op, {&x}, {&y});
      std::vector<double> exact(size_t(x.numel())), accurate(exact.size());
      for (int64_t i = 0; i < x.numel(); ++i) {
        exact[i] = roundFromFloat(t, c.f(float(x.get(i))));
        accurate[i] = c.ref(x.get(i));
      }
      expectEqual(y, exact, "rounded once from float");
      // gelu's 1 + erf(x/sqrt2) cancels for negative x (as in PyTorch's
      // float kernel): its error scales with x, not with the result.
      bool cancels = std::string(c.op) == "graph.gelu";
      for (int64_t i = 0; i < x.numel(); ++i)
        EXPECT_LE(std::fabs(y.get(i) - accurate[i]),
                  (t == DType::F32 ? 4 : 1) *
                      ulp(t, cancels ? std::max(std::fabs(accurate[i]), std::fabs(x.get(i)))
                                     : accurate[i]))
            << i << " x=" << x.get(i);
    }
}

TEST(CpuElementwise, GeluTanhAndPow) {
  Tensor x = randomTensor(DType::F32, {64}, 3, -4, 4), y(DType::F32, {64});
  run("graph.gelu", {&x}, {&y}, Attrs{{"approximate", "tanh"}});
  for (int64_t i = 0; i < 64; ++i) {
    double v = x.get(i);
    double ref = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(y.get(i), ref, 4 * ulp(DType::F32, ref) + 1e-7);
  }
  Tensor p = randomTensor(DType::F16, {64}, 4, 0.1, 3), q(DType::F16, {64});
  run("graph.pow", {&p}, {&q}, Attrs{{"exponent", 3.0}});
  for (int64_t i = 0; i < 64; ++i)
    EXPECT_EQ(q.get(i), roundFromFloat(DType::F16, std::pow(float(p.get(i)), 3.0f)));
  EXPECT_THROW(run("graph.gelu", {&x}, {&y}, Attrs{{"approximate", "erf"}}),
               std::invalid_argument);
}

// Multi-index of flat i in |shape|.
std::vector<int64_t> unflatten(int64_t i, const std::vector<int64_t> &shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

// Flat index in |shape| (right-aligned) of the broadcast multi-index.
int64_t broadcastIndex(const std::vector<int64_t> &idx,
                       const std::vector<int64_t> &shape) {
  int64_t flat = 0;
  size_t off = idx.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : idx[d + off]);
  return flat;
}

TEST(CpuElementwise, BinaryBroadcasting) {
  struct Shapes {
    std::vector<int64_t> a, b, out;
  } cases[] = {{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
               {{2, 3, 4}, {4}, {2, 3, 4}},
               {{2, 3, 4}, {3, 1}, {2, 3, 4}},
               {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}},
               {{}, {5, 2}, {5, 2}},
               {{5, 1}, {}, {5, 1}}};
  const char *ops[] = {"graph.add", "graph.sub", "graph.mul", "graph.div"};
  for (DType t : kFloatTypes)
    for (const Shapes &s : cases)
      for (int k = 0; k < 4; ++k) {
        SCOPED_TRACE(std::string(ops[k]) + " " + name(t));
        Tensor a = randomTensor(t, s.a, 1, 0.5, 3), b = randomTensor(t, s.b, 2, 0.5, 3);
        Tensor y(t, s.out);
        run(ops[k], {&a, &b}, {&y});
        std::vector<double> ref(size_t(y.numel()));
        for (int64_t i = 0; i < y.numel(); ++i) {
          auto idx = unflatten(i, s.out);
          float x1 = float(a.get(broadcastIndex(idx, s.a)));
          float x2 = float(b.get(broadcastIndex(idx, s.b)));
          float r = k == 0 ? x1 + x2 : k == 1 ? x1 - x2 : k == 2 ? x1 * x2 : x1 / x2;
          ref[i] = roundFromFloat(t, r);
        }
        expectEqual(y, ref, "broadcast");
      }
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {2}), y(DType::F32, {2, 3});
  EXPECT_THROW(run("graph.add", {&a, &b}, {&y}), std::invalid_argument);
}

TEST(CpuElementwise, CastRoundsOnceWithOverflowAndSubnormals) {
  std::vector<double> v = {0.1, -1.0 / 3, 65504, 65520, 70000, -1e6, 1e-7,
                           3e-8, 2.9802322387695312e-08, 1e38, 3.4e38, -0.0,
                           1.00048828125, 1.0009765625 + 1e-7};
  Tensor x = fromValues(DType::F32, {int64_t(v.size())}, v);
  for (DType t : {DType::F16, DType::BF16}) {
    Tensor y(t, x.shape);
    run("graph.cast", {&x}, {&y});
    std::vector<double> ref;
    for (size_t i = 0; i < v.size(); ++i) ref.push_back(roundTo(t, x.get(int64_t(i))));
    expectEqual(y, ref, name(t));
    // Back to f32 is exact.
    Tensor z(DType::F32, x.shape);
    run("graph.cast", {&y}, {&z});
    expectEqual(z, ref, "widen");
  }
  EXPECT_TRUE(std::isinf(roundTo(DType::F16, 70000)));
  // f16 -> bf16 rounds the exact half value once.
  Tensor h = randomTensor(DType::F16, {100}, 9, -100, 100), b(DType::BF16, {100});
  run("graph.cast", {&h}, {&b});
  for (int64_t i = 0; i < 100; ++i)
    EXPECT_EQ(b.get(i), roundTo(DType::BF16, h.get(i)));
}

TEST(CpuElementwise, DropoutMaskIsTheSharedFunction) {
  const double p = 0.25;
  const int64_t n = 4096;
  Tensor x = randomTensor(DType::F32, {n}, 5, 0.5, 1.5), y(DType::F32, {n});
  Attrs attrs{{"p", p}, {"key", 7}, {"seed", 42}, {"step", 3}};
  run("graph.dropout", {&x}, {&y}, attrs);
  int64_t kept = 0;
  float scale = float(1.0 / (1.0 - p));
  for (int64_t i = 0; i < n; ++i) {
    bool keep = num::dropoutKeep(42, 3, 7, uint64_t(i), p);
    kept += keep;
    EXPECT_EQ(y.get(i), keep ? double(float(x.get(i)) * scale) : 0.0) << i;
  }
  EXPECT_NEAR(double(kept) / n, 0.75, 0.03);
  // Another step or key gives another mask; the same arguments the same.
  Tensor y2(DType::F32, {n}), y3(DType::F32, {n}), y4(DType::F32, {n});
  run("graph.dropout", {&x}, {&y2}, Attrs{{"p", p}, {"key", 7}, {"seed", 42}, {"step", 4}});
  run("graph.dropout", {&x}, {&y3}, Attrs{{"p", p}, {"key", 8}, {"seed", 42}, {"step", 3}});
  run("graph.dropout", {&x}, {&y4}, attrs);
  EXPECT_NE(y.bytes, y2.bytes);
  EXPECT_NE(y.bytes, y3.bytes);
  EXPECT_EQ(y.bytes, y4.bytes);
  // p = 0 is the identity; bf16 results round once.
  Tensor z(DType::F32, {n});
  run("graph.dropout", {&x}, {&z}, Attrs{{"p", 0.0}});
  EXPECT_EQ(z.bytes, x.bytes);
  Tensor hb = randomTensor(DType::BF16, {256}, 6), yb(DType::BF16, {256});
  run("graph.dropout", {&hb}, {&yb}, Attrs{{"p", 0.1}, {"seed", 1}});
  float s01 = float(1.0 / 0.9);
  for (int64_t i = 0; i < 256; ++i)
    EXPECT_EQ(yb.get(i), num::dropoutKeep(1, 0, 0, uint64_t(i), 0.1)
                             ? roundFromFloat(DType::BF16, float(hb.get(i)) * s01)
                             : 0.0);
}

// Data-parallel shards: rank r's mask over n elements is elements
// [r*n, (r+1)*n) of the mask over the global batch of W*n elements.
TEST(CpuElementwise, DropoutShardIsASliceOfTheGlobalMask) {
  const double p = 0.5;
  const int64_t n = 64;
  Tensor ones = randomTensor(DType::F32, {2 * n}, 5, 1.0, 1.0);
  Tensor global(DType::F32, {2 * n});
  run("graph.dropout", {&ones}, {&global}, Attrs{{"p", p}, {"key", 3}, {"seed", 9}, {"step", 2}});
  Tensor half0 = randomTensor(DType::F32, {n}, 5, 1.0, 1.0);
  for (int64_t rank = 0; rank < 2; ++rank) {
    Tensor y(DType::F32, {n});
    run("graph.dropout", {&half0}, {&y},
        Attrs{{"p", p}, {"key", 3}, {"seed", 9}, {"step", 2}, {"shard", rank}});
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(y.get(i), global.get(rank * n + i)) << rank << " " << i;
  }
}

double geluRef(double x, bool tanhApprox) {
  if (tanhApprox)
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

TEST(CpuElementwise, ReluAndGeluBackward) {
  Tensor x = fromValues(DType::F32, {5}, {-1, 0, 2, -0.5, 3});
  Tensor g = fromValues(DType::F32, {5}, {1, 2, 3, 4, 5}), dx(DType::F32, {5});
  run("graph.relu_backward", {&x, &g}, {&dx});
  expectEqual(dx, {0, 0, 3, 0, 5}, "relu'");
  for (bool approx : {false, true}) {
    Tensor xs = randomTensor(DType::F32, {40}, 8, -3, 3);
    Tensor gs = randomTensor(DType::F32, {40}, 9), d(DType::F32, {40});
    run("graph.gelu_backward", {&xs, &gs}, {&d},
        Attrs{{"approximate", approx ? "tanh" : "none"}});
    std::vector<double> ref(40);
    for (int i = 0; i < 40; ++i) {
      double h = 1e-6, v = xs.get(i);
      ref[i] = gs.get(i) * (geluRef(v + h, approx) - geluRef(v - h, approx)) / (2 * h);
    }
    expectClose(d, ref, 1e-5, 1e-5, approx ? "gelu' tanh" : "gelu'");
  }
}

} // namespace
} // namespace ampc::cpu::test
