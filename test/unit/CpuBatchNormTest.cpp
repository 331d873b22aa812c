//===- CpuBatchNormTest.cpp - batch_norm and group_norm against PyTorch ---===//
//
// Expected values from torch.nn.BatchNorm2d (test/unit/Inputs/
// batch_norm_fixture.py, which printed the arrays below): one training call
// (batch statistics; running statistics updated with momentum 0.1 and the
// unbiased variance), the gradients of sum(y * g), and an evaluation call on
// the updated running statistics; torch.nn.GroupNorm likewise. FP32 throughout; the tolerances are a few
// float ulps of the values (a wrong formula is off by far more).
//
//===----------------------------------------------------------------------===//
#include "test/unit/CpuKernelTestUtil.h"

namespace ampc::cpu::test {
namespace {

// PyTorch 2.15, torch.nn.BatchNorm2d(3), weight [1.5, -0.5, 2], bias
// [0.25, 0, -1], running_mean [0.1, -0.2, 0.3], running_var [1, 2, 0.5].
const float kX[] = {0.5f, 1.22323084f, 1.84857583f, 2.29139733f, 2.49176168f, 2.42255044f, 2.09313107f, 1.54808843f, 0.861192465f, 0.125410825f, -0.559672356f, -1.10133374f, -1.4262619f, -1.49047971f, -1.28529513f, -0.8384794f, -0.210506976f, 0.513629198f, 1.23592067f, 1.85860956f, 2.29741621f, 2.49295139f, 2.41874933f, 2.08485413f};
const float kG[] = {1.0f, 0.862807095f, 0.488872141f, -0.0192024074f, -0.522008061f, -0.881582141f, -0.999262512f, -0.84275943f, -0.455015123f, 0.0575786605f, 0.554374099f, 0.899057031f, 0.997051239f, 0.821468949f, 0.420487016f, -0.0958707035f, -0.58592248f, -0.915205538f, -0.993369401f, -0.798966408f, -0.385338724f, 0.134020388f, 0.61660701f, 0.930004597f};
const float kTrainY[] = {0.65939796f, 1.40490675f, 2.04951453f, 2.5059762f, -0.562730014f, -0.523689628f, -0.337871999f, -0.0304264706f, -1.31921303f, -2.40530396f, -3.41655874f, -4.21610785f, -1.32619917f, -1.39239514f, -1.1808902f, -0.720311046f, 0.961555183f, 0.553087294f, 0.145659909f, -0.205584019f, 0.800804198f, 1.08943462f, 0.979904652f, 0.487040222f};
const float kRunMean[] = {0.100283593f, -0.0305851847f, 0.377744615f};
const float kRunVar[] = {1.14200294f, 1.88979471f, 0.659804583f};
const float kEvalY[] = {0.811057985f, 1.82621384f, 2.70397329f, 3.3255353f, -0.917416036f, -0.892242849f, -0.772428036f, -0.574187696f, 0.190333456f, -1.62129009f, -3.3080852f, -4.64175081f, -1.89272058f, -1.98285925f, -1.6948539f, -1.06768548f, 0.0654403046f, -0.197939083f, -0.460647494f, -0.687128961f, 3.72656846f, 4.20801067f, 4.02531195f, 3.20320344f};
const float kDx[] = {0.481950283f, 0.391212225f, 0.0495803133f, -0.443113565f, -0.177512765f, 0.0260704532f, 0.0960497335f, 0.0137241557f, -1.13460338f, -0.477004111f, 0.164099634f, 0.599975228f, 0.343926549f, 0.158435628f, -0.240519434f, -0.741471767f, -0.111940451f, 0.0658897609f, 0.102089785f, -0.0143705914f, -0.838424623f, -0.0454751626f, 0.656885087f, 1.07454753f};
const float kDw[] = {-0.791401625f, -0.137330875f, -0.988462985f};
const float kDb[] = {4.47561312f, -6.53907585f, 2.35128784f};

// torch.nn.GroupNorm(2, 4), weight [0.5, 1.25, -1, 2], bias [0, 0.5, -0.25, 1].
const float kGnX[] = {2.75f, 2.02508569f, 0.200676501f, -1.84153378f, -3.11459398f, -3.00326347f, -1.56134701f, 0.514312804f, 2.22059822f, 2.73290205f, 1.80364013f, -0.118097469f, -2.10357928f, -3.19327188f, -2.86055064f, -1.26621222f, 0.819237471f, 2.38794994f, 2.68180394f, 1.55878639f, -0.438374609f, -2.34449863f, -3.23840094f, -2.68808031f};
const float kGnG[] = {0.0f, 0.28595221f, 0.548023939f, 0.764328957f, 0.916803122f, 0.992712975f, 0.985719204f, 0.896405756f, 0.732231498f, 0.506906927f, 0.239249468f, -0.0483882613f, -0.331985205f, -0.587857068f, -0.794635713f, -0.935052574f, -0.997381032f, -0.976416051f, -0.873908341f, -0.698418617f, -0.464602441f, -0.191986233f, 0.0966631621f, 0.377240002f};
const float kGnY[] = {0.699439645f, 0.543298185f, 0.150333151f, -0.223861724f, -0.909382403f, -0.849432886f, 1.43372798f, 0.0320600756f, -1.12017381f, 3.43225288f, 2.17721415f, -0.418238133f, -0.265001476f, -0.535510063f, -0.452914327f, 0.357172698f, 1.65141857f, 2.6249733f, -1.79025793f, -1.28546083f, -0.387735695f, -0.438136488f, -1.24175572f, -0.747016847f};
const float kGnDx[] = {0.0261022896f, 0.0216135234f, -0.0882453769f, 0.0191305429f, -0.0148129016f, 0.0362118036f, 0.0132281482f, -0.377410561f, -0.637247562f, 0.430534303f, 0.270930946f, 0.299964756f, 0.187341899f, 0.0196472704f, 0.000124573708f, -0.230492264f, -0.069801718f, 0.0931804776f, 0.0210194886f, 0.000133484602f, -0.00182631612f, -0.284822047f, 0.0208384991f, 0.244656861f};
const float kGnDw[] = {2.00085044f, -5.01976347f, -3.40857625f, 0.491781205f};
const float kGnDb[] = {-0.880501866f, -0.235004663f, 0.577427149f, 0.979685068f};

Tensor f32(std::vector<int64_t> shape, const float *v) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, v[i]);
  return t;
}

std::vector<double> ref(const float *v, size_t n) { return {v, v + n}; }

TEST(CpuBatchNorm, TrainingMatchesPyTorchAndUpdatesTheRunningStatistics) {
  const float w[] = {1.5f, -0.5f, 2.0f}, b[] = {0.25f, 0.0f, -1.0f};
  const float rm0[] = {0.1f, -0.2f, 0.3f}, rv0[] = {1.0f, 2.0f, 0.5f};
  Tensor x = f32({2, 3, 2, 2}, kX), tw = f32({3}, w), tb = f32({3}, b);
  Tensor rm = f32({3}, rm0), rv = f32({3}, rv0), y(DType::F32, x.shape);
  run("graph.batch_norm", {&x, &rm, &rv, &tw, &tb}, {&y},
      Attrs{{"eps", 1e-5}, {"momentum", 0.1}, {"training", true}});
  expectClose(y, ref(kTrainY, 24), 2e-6, 2e-6, "y");
  expectClose(rm, ref(kRunMean, 3), 1e-7, 1e-6, "running_mean");
  expectClose(rv, ref(kRunVar, 3), 1e-7, 1e-6, "running_var");

  // Evaluation normalises with the running statistics and leaves them.
  Tensor ye(DType::F32, x.shape);
  run("graph.batch_norm", {&x, &rm, &rv, &tw, &tb}, {&ye},
      Attrs{{"training", false}});
  expectClose(ye, ref(kEvalY, 24), 2e-6, 2e-6, "eval y");
  expectClose(rm, ref(kRunMean, 3), 1e-7, 1e-6, "running_mean after eval");
}

TEST(CpuBatchNorm, BackwardMatchesPyTorchAutograd) {
  const float w[] = {1.5f, -0.5f, 2.0f};
  Tensor x = f32({2, 3, 2, 2}, kX), g = f32({2, 3, 2, 2}, kG), tw = f32({3}, w);
  Tensor dx(DType::F32, x.shape), dw(DType::F32, {3}), db(DType::F32, {3});
  run("graph.batch_norm_backward", {&x, &tw, &g}, {&dx, &dw, &db});
  expectClose(dx, ref(kDx, 24), 2e-6, 2e-6, "dx");
  expectClose(dw, ref(kDw, 3), 2e-6, 2e-6, "dweight");
  expectClose(db, ref(kDb, 3), 2e-6, 2e-6, "dbias");
}

// [N, C] input (BatchNorm1d) in half: statistics in float, y rounded once.
TEST(CpuBatchNorm, TwoDimensionalHalfInput) {
  for (DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(name(t));
    Tensor x = randomTensor(t, {6, 4}, 1), w = randomTensor(t, {4}, 2),
           b = randomTensor(t, {4}, 3), y(t, {6, 4});
    Tensor rm(DType::F32, {4}), rv(DType::F32, {4});
    for (int c = 0; c < 4; ++c)
      rv.set(c, 1.0);
    run("graph.batch_norm", {&x, &rm, &rv, &w, &b}, {&y},
        Attrs{{"momentum", 0.5}});
    for (int c = 0; c < 4; ++c) {
      double mean = 0, var = 0;
      for (int n = 0; n < 6; ++n)
        mean += x.get(n * 4 + c) / 6;
      for (int n = 0; n < 6; ++n)
        var += (x.get(n * 4 + c) - mean) * (x.get(n * 4 + c) - mean);
      for (int n = 0; n < 6; ++n) {
        double want = (x.get(n * 4 + c) - mean) / std::sqrt(var / 6 + 1e-5) *
                          w.get(c) + b.get(c);
        EXPECT_NEAR(y.get(n * 4 + c), want, 1e-5 + ulp(t, want)) << n << "," << c;
      }
      EXPECT_NEAR(rm.get(c), 0.5 * mean, 1e-6) << c;
      EXPECT_NEAR(rv.get(c), 0.5 + 0.5 * var / 5, 1e-6) << c;
    }
  }
}

TEST(CpuGroupNorm, ForwardAndBackwardMatchPyTorch) {
  const float w[] = {0.5f, 1.25f, -1.0f, 2.0f}, b[] = {0.0f, 0.5f, -0.25f, 1.0f};
  Tensor x = f32({2, 4, 3}, kGnX), g = f32({2, 4, 3}, kGnG);
  Tensor tw = f32({4}, w), tb = f32({4}, b), y(DType::F32, x.shape);
  Attrs attrs{{"num_groups", int64_t(2)}};
  run("graph.group_norm", {&x, &tw, &tb}, {&y}, attrs);
  expectClose(y, ref(kGnY, 24), 2e-6, 2e-6, "y");
  Tensor dx(DType::F32, x.shape), dw(DType::F32, {4}), db(DType::F32, {4});
  run("graph.group_norm_backward", {&x, &tw, &g}, {&dx, &dw, &db}, attrs);
  expectClose(dx, ref(kGnDx, 24), 2e-6, 2e-6, "dx");
  expectClose(dw, ref(kGnDw, 4), 2e-6, 2e-6, "dweight");
  expectClose(db, ref(kGnDb, 4), 2e-6, 2e-6, "dbias");
}

} // namespace
} // namespace ampc::cpu::test
