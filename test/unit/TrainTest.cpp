//===- TrainTest.cpp - trainMain end to end with a hand-written model ----===//
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/Dataset.h"
#include "runtime/numerics/Scaler.h"
#include "runtime/train/Report.h"
#include "runtime/train/Schedule.h"
#include "test/unit/TestFiles.h"
#include "test/unit/TestModel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

using namespace ampc;
using ampc::test::SoftmaxClassifier;
using ampc::test::TempDir;
using json = nlohmann::json;

namespace {

constexpr int64_t kSamples = 100, kDim = 4, kClasses = 3;

// Three separable Gaussian-ish blobs; sample |badSample| (if >= 0) gets an
// inf feature.
void writeBlobs(const TempDir &d, int64_t badSample = -1) {
  std::vector<float> x(size_t(kSamples * kDim));
  std::vector<int64_t> y(kSamples);
  uint32_t lcg = 12345;
  auto noise = [&] {
    lcg = lcg * 1664525u + 1013904223u;
    return float(lcg >> 8) / float(1 << 24) - 0.5f;
  };
  for (int64_t i = 0; i < kSamples; ++i) {
    y[size_t(i)] = i % kClasses;
    for (int64_t k = 0; k < kDim; ++k)
      x[size_t(i * kDim + k)] = (k == y[size_t(i)] ? 2.0f : 0.0f) + noise();
  }
  if (badSample >= 0)
    x[size_t(badSample * kDim)] = INFINITY;
  test::writeBytes(d / "x.npy",
                   test::npyBytes("<f4", {kSamples, kDim}, test::rawBytes(x)));
  test::writeBytes(d / "y.npy",
                   test::npyBytes("<i8", {kSamples}, test::rawBytes(y)));
}

std::string dataFlag(const TempDir &d) {
  return "x=" + (d / "x.npy") + ",label=" + (d / "y.npy");
}

int runMain(rt::Model &m, std::vector<std::string> args) {
  args.insert(args.begin(), "train");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  return rt::trainMain(int(argv.size()), argv.data(), m);
}

std::vector<json> readJsonl(const std::string &path) {
  std::vector<json> out;
  std::istringstream in(test::readBytes(path));
  for (std::string line; std::getline(in, line);)
    out.push_back(json::parse(line));
  return out;
}

TEST(Train, LossFallsMetricsAndEval) {
  TempDir d;
  writeBlobs(d);
  SoftmaxClassifier m;
  ASSERT_EQ(runMain(m, {"--data", dataFlag(d), "--steps=40", "--log-every=5",
                        "--metrics=" + (d / "m.jsonl"), "--eval=" + dataFlag(d)}),
            0);
  auto lines = readJsonl(d / "m.jsonl");
  ASSERT_EQ(lines.size(), 9u); // 8 logged steps + the eval line
  for (int i = 0; i < 8; ++i) {
    const json &l = lines[size_t(i)];
    EXPECT_EQ(l["step"], 5 * (i + 1));
    for (const char *k : {"loss", "loss_scale", "grad_norm", "skipped", "lr",
                          "step_time_ms", "clip_coef", "samples_per_s", "epoch"})
      EXPECT_TRUE(l.contains(k)) << k;
    EXPECT_EQ(l["skipped"], 0);
    EXPECT_EQ(l["loss_scale"], 65536.0);
    EXPECT_EQ(float(l["lr"]), 0.05f); // the model's compiled-in default
  }
  EXPECT_LT(float(lines[7]["loss"]), 0.5f * float(lines[0]["loss"]));
  EXPECT_EQ(lines[8]["step"], 40);
  EXPECT_EQ(lines[8]["eval_samples"], 100); // all 100: the last batch of 4 padded
  EXPECT_GT(double(lines[8]["eval_accuracy"]), 0.9);
  ASSERT_EQ(m.iterations.size(), 40u);
  EXPECT_EQ(m.iterations.front(), 0);
  EXPECT_EQ(m.iterations.back(), 39);
  EXPECT_EQ(m.optimizerStep(), 40);
}

TEST(Train, LrScheduleAndHyperFlags) {
  TempDir d;
  writeBlobs(d);
  SoftmaxClassifier m;
  // --data repeated, one input each.
  ASSERT_EQ(runMain(m, {"--data=x=" + (d / "x.npy"), "--data",
                        "label=" + (d / "y.npy"), "--steps=10", "--log-every=1",
                        "--lr=0.01", "--warmup-steps=3", "--lr-schedule=cosine",
                        "--min_lr=0.001", "--metrics=" + (d / "m.jsonl")}),
            0);
  auto lines = readJsonl(d / "m.jsonl");
  ASSERT_EQ(lines.size(), 10u);
  rt::LrSchedule s{rt::LrSchedule::Cosine, 0.01f, 0.001f, 3, 10};
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(float(lines[size_t(i)]["lr"]), rt::learningRate(s, i)) << i;
}

TEST(Train, OverflowFromDataSkipsAtKnownSteps) {
  TempDir d;
  const int64_t bad = 5;
  writeBlobs(d, bad); // an inf in the data is an overflow, not an error
  SoftmaxClassifier m;
  ASSERT_EQ(runMain(m, {"--data=" + dataFlag(d), "--steps=36", "--log-every=1",
                        "--seed=3", "--init-scale=1024", "--growth-interval=3",
                        "--metrics=" + (d / "m.jsonl")}),
            0);
  auto lines = readJsonl(d / "m.jsonl");
  ASSERT_EQ(lines.size(), 36u);
  // Expected: the batch holding sample 5 overflows; the scale follows the
  // state machine.
  num::LossScaleParams p;
  p.growthInterval = 3;
  float scale = 1024;
  int32_t tracker = 0, hyst = 1;
  int skips = 0;
  for (int64_t it = 0; it < 36; ++it) {
    auto perm = rt::data::epochPermutation(kSamples, 3, it / 12);
    bool overflow = false;
    for (int64_t k = 0; k < 8; ++k)
      overflow |= perm[size_t((it % 12) * 8 + k)] == bad;
    EXPECT_EQ(lines[size_t(it)]["skipped"], overflow ? 1 : 0) << it;
    EXPECT_EQ(float(lines[size_t(it)]["loss_scale"]), scale) << it;
    // Overflow attribution: the inf feature makes every logit of its row,
    // so both gradients, non-finite; clean steps carry no names.
    if (overflow) {
      EXPECT_EQ(lines[size_t(it)]["nonfinite_params"],
                json({"fc.weight", "fc.bias"}));
      EXPECT_EQ(lines[size_t(it)]["nonfinite_params_total"], 2);
    } else {
      EXPECT_FALSE(lines[size_t(it)].contains("nonfinite_params")) << it;
    }
    EXPECT_EQ(lines[size_t(it)]["clip_norm"], 5.0); // the run clips
    num::updateLossScale(scale, tracker, hyst, overflow, p);
    skips += overflow;
  }
  EXPECT_GE(skips, 1);
  EXPECT_EQ(m.scaler().skippedSteps, skips);
  EXPECT_EQ(m.optimizerStep(), 36 - skips);
  EXPECT_EQ(m.scaler().scale, scale);
  EXPECT_EQ(m.nonFiniteCounts(), (std::vector<int64_t>{skips, skips}));
}

TEST(Report, AttributionAndSkipSummary) {
  rt::StepRecord r;
  r.skipped = 1;
  r.skipReason = "overflow";
  std::vector<std::string> names = {"a", "b", "c", "d", "e", "f"};
  rt::attributeNonFinite(r, names, {0, 1, 1, 0, 1, 1});
  EXPECT_EQ(r.nonFiniteParams, (std::vector<std::string>{"b", "c", "e", "f"}));
  EXPECT_EQ(r.nonFiniteTotal, 4);
  rt::attributeNonFinite(r, names, {1, 1, 1, 1, 1, 1});
  EXPECT_EQ(r.nonFiniteParams, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(r.nonFiniteTotal, 6);
  json j = json::parse(rt::metricsJson(r));
  EXPECT_EQ(j["nonfinite_params"], json({"a", "b", "c", "d"}));
  EXPECT_EQ(j["nonfinite_params_total"], 6);
  EXPECT_FALSE(j.contains("clip_norm"));
  EXPECT_NE(rt::progressText(r, 10).find("non-finite: a, b, c, d (+2 more)"),
            std::string::npos);
  r.skipped = 0; // a clean step says nothing
  EXPECT_FALSE(json::parse(rt::metricsJson(r)).contains("nonfinite_params"));

  EXPECT_EQ(rt::skipSummary(0, names, {0, 0, 0, 0, 0, 0}), "");
  EXPECT_EQ(rt::skipSummary(12, {"fc1.bias", "fc2.weight"}, {3, 12}),
            "skipped 12 steps; fc2.weight non-finite in 12, fc1.bias in 3");
  EXPECT_EQ(rt::skipSummary(1, {"w"}, {1}), "skipped 1 step; w non-finite in 1");
  EXPECT_EQ(rt::skipSummary(9, names, {1, 2, 3, 4, 5, 9}) ,
            "skipped 9 steps; f non-finite in 9, e in 5, d in 4, c in 3, b "
            "in 2, a in 1");
  std::vector<std::string> seven = {"a", "b", "c", "d", "e", "f", "g"};
  EXPECT_EQ(rt::skipSummary(2, seven, {2, 2, 2, 2, 2, 2, 1}),
            "skipped 2 steps; a non-finite in 2, b in 2, c in 2, d in 2, e in "
            "2, f in 2, and 1 more");
}

TEST(Train, ResumeIsBitwise) {
  TempDir d;
  writeBlobs(d, /*badSample=*/17);
  std::vector<std::string> common = {
      "--data=" + dataFlag(d), "--lr-schedule=cosine", "--warmup-steps=3",
      "--decay-steps=14",
      "--growth-interval=2", "--init-scale=256", "--seed=11", "--log-every=1"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), common.begin(), common.end());
    return extra;
  };
  // accum 2: 6 batches per step, so 7 steps end mid-epoch.
  SoftmaxClassifier a(8, kDim, kClasses, /*accumSteps=*/2);
  ASSERT_EQ(runMain(a, with({"--steps=14", "--checkpoint-dir=" + (d / "A")})), 0);
  SoftmaxClassifier b(8, kDim, kClasses, 2);
  ASSERT_EQ(runMain(b, with({"--steps=7", "--checkpoint-dir=" + (d / "B")})), 0);
  SoftmaxClassifier c(8, kDim, kClasses, 2);
  ASSERT_EQ(runMain(c, with({"--steps=14", "--resume=" + (d / "B"),
                             "--checkpoint-dir=" + (d / "B")})),
            0);
  EXPECT_EQ(c.iterations.front(), 7);
  EXPECT_EQ(c.iterations.size(), 7u);
  EXPECT_GE(a.scaler().skippedSteps, 1); // the resume crosses a skip
  for (const char *f :
       {"model.safetensors", "optimizer.safetensors", "train_state.json"}) {
    std::string x = test::readBytes(d / ("A/step-00000014/" + std::string(f)));
    std::string y = test::readBytes(d / ("B/step-00000014/" + std::string(f)));
    EXPECT_FALSE(x.empty());
    EXPECT_TRUE(x == y) << f << " differs between 14 steps and 7 + resume 7";
  }
  EXPECT_EQ(test::readBytes(d / "B/latest"), "step-00000014\n");
  EXPECT_TRUE(std::filesystem::exists(d / "B/step-00000007/model.safetensors"));
}

TEST(Train, CheckpointIsReadableSafetensors) {
  TempDir d;
  writeBlobs(d);
  SoftmaxClassifier m;
  ASSERT_EQ(runMain(m, {"--data=" + dataFlag(d), "--steps=10",
                        "--checkpoint-dir=" + (d / "ck"),
                        "--checkpoint-every=4"}),
            0);
  EXPECT_EQ(test::readBytes(d / "ck/latest"), "step-00000010\n");
  EXPECT_TRUE(std::filesystem::exists(d / "ck/step-00000004"));
  EXPECT_TRUE(std::filesystem::exists(d / "ck/step-00000008"));
  // model.safetensors: the parameters (the model's state_dict);
  // optimizer.safetensors: the moments. Each tensor in exactly one.
  auto state = m.stateTensors();
  for (bool optimizer : {false, true}) {
    std::string bytes = test::readBytes(
        d / (optimizer ? "ck/step-00000010/optimizer.safetensors"
                       : "ck/step-00000010/model.safetensors"));
    ASSERT_GE(bytes.size(), 8u);
    uint64_t len = 0;
    for (int i = 0; i < 8; ++i)
      len |= uint64_t(uint8_t(bytes[size_t(i)])) << (8 * i);
    EXPECT_EQ(len % 8, 0u);
    json h = json::parse(bytes.substr(8, len));
    EXPECT_EQ(h["__metadata__"]["step"], "10");
    EXPECT_EQ(h["__metadata__"]["model"], "softmax_test");
    size_t mine = 0;
    for (const rt::StateTensor &t : state) {
      if (t.optimizer != optimizer) {
        EXPECT_FALSE(h.contains(t.name)) << t.name;
        continue;
      }
      ++mine;
      const json &e = h[t.name];
      EXPECT_EQ(e["dtype"], "F32");
      EXPECT_EQ(e["shape"].get<std::vector<int64_t>>(), t.shape);
      auto off = e["data_offsets"].get<std::vector<uint64_t>>();
      size_t n = 1;
      for (int64_t s : t.shape)
        n *= size_t(s);
      ASSERT_EQ(off[1] - off[0], 4 * n);
      EXPECT_EQ(std::memcmp(bytes.data() + 8 + len + off[0], t.data, 4 * n), 0)
          << t.name;
    }
    EXPECT_EQ(h.size(), mine + 1);
    EXPECT_EQ(mine, optimizer ? 4u : 2u); // fc.weight, fc.bias; their moments
  }
  json st = json::parse(test::readBytes(d / "ck/step-00000010/train_state.json"));
  EXPECT_EQ(st["iteration"], 10);
  EXPECT_EQ(st["optimizer_step"], 10);
  EXPECT_EQ(st["scaler"]["scale"], 65536.0);
  EXPECT_EQ(st["data"]["batch_in_epoch"], 10);
}

// --dump-step on a model whose gradients and loss accumulator are not host
// memory (the CUDA target's are on the device): it reads them only through
// Model::copyToHost, and passes setDataShard through to the model.
TEST(Train, DumpStepReadsDeviceBuffersThroughCopyToHost) {
  struct DeviceLike : SoftmaxClassifier {
    // What grad() and lossAccumulator() hand out: NaN, never the values.
    std::vector<float> fakeGrad[2] = {std::vector<float>(12, NAN),
                                      std::vector<float>(3, NAN)};
    float fakeLoss = NAN;
    int copies = 0, shardRank = -1, shardWorld = -1;
    float *grad(int p) override { return fakeGrad[p].data(); }
    float *lossAccumulator() override { return &fakeLoss; }
    void copyToHost(void *dst, const void *src, size_t bytes) override {
      ++copies;
      const float *real = src == &fakeLoss ? SoftmaxClassifier::lossAccumulator()
                          : src == fakeGrad[0].data() ? SoftmaxClassifier::grad(0)
                                                      : SoftmaxClassifier::grad(1);
      std::memcpy(dst, real, bytes);
    }
    void setDataShard(int rank, int world) override {
      shardRank = rank;
      shardWorld = world;
    }
  } m;
  TempDir d;
  writeBlobs(d);
  ASSERT_EQ(runMain(m, {"--data=" + dataFlag(d), "--steps=1",
                        "--dump-step=" + (d / "step.safetensors")}),
            0);
  EXPECT_EQ(m.copies, 3); // two gradients and the loss accumulator
  EXPECT_EQ(m.shardRank, 0);
  EXPECT_EQ(m.shardWorld, 1);
  rt::SafetensorsFile f = rt::readSafetensors(d / "step.safetensors");
  EXPECT_EQ(f.metadata["loss_sum"], f.metadata["loss"]); // one micro, one rank
  // step() unscaled the gradients in place (divisor 1, scale a power of 2).
  float inv = 1.0f / std::stof(f.metadata["before.scale"]);
  for (int p = 0; p < 2; ++p) {
    const std::vector<float> &g = f.tensors["grad." + m.params()[size_t(p)].name].data;
    ASSERT_EQ(g.size(), m.fakeGrad[p].size());
    for (size_t i = 0; i < g.size(); ++i)
      EXPECT_EQ(g[i] * inv, m.SoftmaxClassifier::grad(p)[i]) << p << " " << i;
  }
}

std::string errorOfRun(rt::Model &m, std::vector<std::string> args, int *rc) {
  testing::internal::CaptureStderr();
  *rc = runMain(m, std::move(args));
  return testing::internal::GetCapturedStderr();
}

TEST(Train, BadInputExitsWithOneLine) {
  TempDir d;
  writeBlobs(d);
  SoftmaxClassifier m;
  int rc = 0;
  std::string err = errorOfRun(
      m, {"--data=x=" + (d / "nope.npy") + ",label=" + (d / "y.npy")}, &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "error: " + (d / "nope.npy") + ": no such file\n");
  err = errorOfRun(m, {"--data=" + dataFlag(d), "--lr-schedule=linear"}, &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "error: --lr-schedule: unknown schedule 'linear' "
                 "(constant or cosine)\n");
  err = errorOfRun(m, {"--data=" + dataFlag(d), "--resume=" + (d / "nockpt")},
                   &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "error: " + (d / "nockpt") + ": no such checkpoint\n");
}

TEST(Train, ResumeChecksModelNameAndShapes) {
  TempDir d;
  writeBlobs(d);
  SoftmaxClassifier m;
  ASSERT_EQ(runMain(m, {"--data=" + dataFlag(d), "--steps=2",
                        "--checkpoint-dir=" + (d / "ck")}),
            0);
  int rc = 0;
  SoftmaxClassifier other(8, kDim, kClasses, 1, "other");
  std::string err = errorOfRun(
      other, {"--data=" + dataFlag(d), "--resume=" + (d / "ck")}, &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("checkpoint is of model 'softmax_test', this binary "
                     "trains 'other'"),
            std::string::npos) << err;
  SoftmaxClassifier wider(8, kDim, kClasses + 1);
  err = errorOfRun(wider, {"--data=" + dataFlag(d), "--steps=3",
                           "--resume=" + (d / "ck")},
                   &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("model.safetensors: tensor 'fc.weight' has shape [3,4], "
                     "the model's is [4,4]"),
            std::string::npos) << err;
}

// One name per setting: the binary's --clip-norm is `ampc compile
// --clip-norm`; --max-norm (its old name) still works, and so do
// checkpoints that stored the threshold as max_norm.
TEST(Train, ClipNormFlagOldSpellingAndOldCheckpoints) {
  TempDir d;
  writeBlobs(d);
  auto firstCoef = [&](std::vector<std::string> flags, const char *tag) {
    SoftmaxClassifier m;
    std::vector<std::string> args = {"--data=" + dataFlag(d), "--steps=1",
                                     "--log-every=1",
                                     "--metrics=" + (d / tag)};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_EQ(runMain(m, args), 0) << tag;
    return float(readJsonl(d / tag)[0]["clip_coef"]);
  };
  float byDefault = firstCoef({}, "a.jsonl"); // compiled-in 5: no clipping
  float clipped = firstCoef({"--clip-norm=0.001"}, "b.jsonl");
  EXPECT_EQ(byDefault, 1.0f);
  EXPECT_LT(clipped, 1.0f);
  EXPECT_EQ(firstCoef({"--max_norm=0.001"}, "c.jsonl"), clipped);
  EXPECT_EQ(firstCoef({"--max-norm=0.001"}, "d.jsonl"), clipped);

  // A checkpoint from before the rename: hyper.max_norm, no clip_norm.
  SoftmaxClassifier a;
  ASSERT_EQ(runMain(a, {"--data=" + dataFlag(d), "--steps=2",
                        "--clip-norm=0.001",
                        "--checkpoint-dir=" + (d / "ck")}),
            0);
  std::string statePath = d / "ck/step-00000002/train_state.json";
  // Ordered, so the file changes in nothing but that key.
  auto st = nlohmann::ordered_json::parse(test::readBytes(statePath));
  ASSERT_TRUE(st["hyper"].contains("clip_norm"));
  st["hyper"]["max_norm"] = st["hyper"]["clip_norm"];
  st["hyper"].erase("clip_norm");
  test::writeBytes(statePath, st.dump());
  SoftmaxClassifier b;
  ASSERT_EQ(runMain(b, {"--data=" + dataFlag(d), "--steps=3", "--log-every=1",
                        "--resume=" + (d / "ck"),
                        "--metrics=" + (d / "e.jsonl")}),
            0);
  EXPECT_LT(float(readJsonl(d / "e.jsonl")[0]["clip_coef"]), 1.0f);
}

} // namespace
