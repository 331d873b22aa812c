//===- DataTest.cpp - npy, IDX, gzip and token loading; batching ---------===//
#include "runtime/data/DataError.h"
#include "runtime/data/Array.h"
#include "runtime/data/Dataset.h"
#include "test/unit/TestFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <filesystem>
#include <numeric>

using namespace ampc;
using namespace ampc::rt;
using namespace ampc::rt::data;
using ampc::test::TempDir;

namespace {

template <class T> std::vector<T> as(const std::vector<uint8_t> &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

Dataset load(const std::vector<TensorInfo> &inputs,
             const std::vector<std::string> &items, int64_t context = 0) {
  return loadDataset(inputs, parseDataSpecs(items, "--data"), context,
                     "--data");
}

TEST(Data, NpyV1FloatAndV2Int64) {
  TempDir d;
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  test::writeBytes(d / "x.npy", test::npyBytes("<f4", {3, 2}, test::rawBytes(x)));
  std::vector<int64_t> y = {7, -8, 9};
  test::writeBytes(d / "y.npy",
                   test::npyBytes("<i8", {3}, test::rawBytes(y), /*version=*/2));
  Dataset ds = load({{"x", DType::F32, {1, 2}}, {"y", DType::I32, {1}}},
                    {"x=" + (d / "x.npy"), "y=" + (d / "y.npy")});
  EXPECT_EQ(ds.numSamples, 3);
  EXPECT_EQ(as<float>(ds.inputs[0]), x);
  EXPECT_EQ(as<int32_t>(ds.inputs[1]), (std::vector<int32_t>{7, -8, 9}));
}

TEST(Data, NpyConvertsWithoutScaling) {
  TempDir d;
  std::vector<uint8_t> u = {0, 255, 128, 1};
  test::writeBytes(d / "u.npy", test::npyBytes("|u1", {2, 2}, test::rawBytes(u)));
  std::vector<_Float16> h = {_Float16(0.5f), _Float16(-2.0f)};
  test::writeBytes(d / "h.npy", test::npyBytes("<f2", {2, 1}, test::rawBytes(h)));
  Dataset ds = load({{"u", DType::F32, {1, 2}}, {"h", DType::F32, {1, 1}}},
                    {"u=" + (d / "u.npy"), "h=" + (d / "h.npy")});
  EXPECT_EQ(as<float>(ds.inputs[0]), (std::vector<float>{0, 255, 128, 1}));
  EXPECT_EQ(as<float>(ds.inputs[1]), (std::vector<float>{0.5f, -2.0f}));
}

TEST(Data, NpyToHalfAndBF16Inputs) {
  TempDir d;
  std::vector<double> v = {1.0 / 3.0, 65520.0}; // the second overflows f16
  test::writeBytes(d / "v.npy", test::npyBytes("<f8", {2}, test::rawBytes(v)));
  Dataset ds = load({{"a", DType::F16, {1}}}, {"a=" + (d / "v.npy")});
  auto h = as<_Float16>(ds.inputs[0]);
  EXPECT_EQ(h[0], _Float16(1.0 / 3.0));
  EXPECT_TRUE(std::isinf(float(h[1])));
  Dataset db = load({{"a", DType::BF16, {1}}}, {"a=" + (d / "v.npy")});
  auto b = as<uint16_t>(db.inputs[0]);
  EXPECT_EQ(b[0], 0x3EABu); // 1/3 in bf16, round to nearest even
}

// The header's shape is a Python tuple of integers, read as numpy reads it.
TEST(Data, NpyShapeIsATuple) {
  TempDir d;
  std::vector<float> x(6, 1.0f);
  auto shapeOf = [&](const std::string &dict) -> std::string {
    test::writeBytes(d / "s.npy", test::npyWithHeader(dict, test::rawBytes(x)));
    try {
      std::string s;
      for (int64_t n : readNpy(d / "s.npy").shape)
        s += std::to_string(n) + ";";
      return s;
    } catch (const InputError &e) {
      std::string m = e.what();
      return m.substr(m.find(": ") + 2);
    }
  };
  auto dict = [](const std::string &shape) {
    return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  };
  EXPECT_EQ(shapeOf(dict("(2, 3)")), "2;3;");
  EXPECT_EQ(shapeOf(dict("(2,3,)")), "2;3;");
  EXPECT_EQ(shapeOf(dict("( 6, )")), "6;");
  EXPECT_EQ(shapeOf(dict("(6L,)")), "6;");
  for (std::string bad : {"(2 3)", "(6)", "(2,,3)", "(,)", "(2, x)", "(-6,)"})
    EXPECT_EQ(shapeOf(dict(bad)),
              "bad .npy header: shape " + bad + " is not a tuple of integers")
        << bad;
  EXPECT_EQ(shapeOf(dict("(2,\n 3)")), "2;3;"); // any whitespace, as Python
  EXPECT_EQ(shapeOf(dict("6")),
            "bad .npy header: shape 6 is not a tuple of integers");
  EXPECT_EQ(shapeOf(dict("(2\n 3)")), // the error stays one line
            "bad .npy header: shape (2  3) is not a tuple of integers");
}

// Integers that the input's type cannot hold are named exactly (u64 data
// past 2^63 had been read as negative labels, 2^64 - 1 as -1).
TEST(Data, IntegersThatDoNotFitAreNamedExactly) {
  TempDir d;
  std::vector<uint64_t> u = {1, UINT64_MAX};
  test::writeBytes(d / "u.npy", test::npyBytes("<u8", {2}, test::rawBytes(u)));
  std::vector<int64_t> w = {1, -5000000000};
  test::writeBytes(d / "w.npy", test::npyBytes("<i8", {2}, test::rawBytes(w)));
  auto errorOf = [&](DType t, const std::string &file) -> std::string {
    try {
      load({{"y", t, {1}}}, {"y=" + (d / file)});
    } catch (const InputError &e) {
      std::string m = e.what();
      return m.substr(m.find(": ") + 2);
    }
    return "";
  };
  EXPECT_EQ(errorOf(DType::I64, "u.npy"),
            "value 18446744073709551615 does not fit input 'y' (i64)");
  EXPECT_EQ(errorOf(DType::I32, "u.npy"),
            "value 18446744073709551615 does not fit input 'y' (i32)");
  EXPECT_EQ(errorOf(DType::I32, "w.npy"),
            "value -5000000000 does not fit input 'y' (i32)");
  EXPECT_EQ(errorOf(DType::I64, "w.npy"), "");
}

TEST(Data, IdxU8ImagesScaledAndGzipped) {
  TempDir d;
  std::string pixels = {0, char(255), char(51), 1, 2, 3, 4, 5};
  test::writeGzip(d / "img-idx3-ubyte.gz", test::idxBytes(0x08, {2, 2, 2}, pixels));
  test::writeBytes(d / "lab.idx", test::idxBytes(0x08, {2}, {3, 9}));
  Dataset ds = load({{"image", DType::F32, {1, 1, 2, 2}},
                     {"label", DType::I64, {1}}},
                    {"image=" + (d / "img-idx3-ubyte.gz"),
                     "label=" + (d / "lab.idx")});
  auto img = as<float>(ds.inputs[0]);
  ASSERT_EQ(img.size(), 8u);
  EXPECT_EQ(img[0], 0.0f);
  EXPECT_EQ(img[1], 1.0f);
  EXPECT_EQ(img[2], 51.0f / 255.0f);
  EXPECT_EQ(img[7], 5.0f / 255.0f);
  EXPECT_EQ(as<int64_t>(ds.inputs[1]), (std::vector<int64_t>{3, 9}));
}

TEST(Data, IdxBigEndianInt32) {
  TempDir d;
  std::string be = {0, 0, 1, 2, char(0xff), char(0xff), char(0xff), char(0xfe)};
  test::writeBytes(d / "v.idx", test::idxBytes(0x0C, {2}, be));
  Dataset ds = load({{"v", DType::I64, {1}}}, {"v=" + (d / "v.idx")});
  EXPECT_EQ(as<int64_t>(ds.inputs[0]), (std::vector<int64_t>{258, -2}));
}

TEST(Data, TokensFillShiftedTargets) {
  TempDir d;
  std::string bytes;
  for (int i = 0; i < 11; ++i)
    bytes += char(10 + i);
  test::writeBytes(d / "text.txt", bytes);
  // 11 tokens, T = 3: (11 - 1) / 3 = 3 samples.
  Dataset ds = load({{"tokens", DType::I32, {2, 3}},
                     {"targets", DType::I64, {2, 3}}},
                    {"tokens=" + (d / "text.txt")}, /*context=*/3);
  EXPECT_EQ(ds.numSamples, 3);
  EXPECT_EQ(ds.tokensPerSample, 3);
  EXPECT_EQ(as<int32_t>(ds.inputs[0]),
            (std::vector<int32_t>{10, 11, 12, 13, 14, 15, 16, 17, 18}));
  EXPECT_EQ(as<int64_t>(ds.inputs[1]),
            (std::vector<int64_t>{11, 12, 13, 14, 15, 16, 17, 18, 19}));
}

TEST(Data, TokensU16) {
  TempDir d;
  std::vector<uint16_t> t = {1000, 2000, 3000, 40000, 5};
  test::writeBytes(d / "t.bin", test::rawBytes(t));
  Dataset ds = load({{"ids", DType::I32, {1, 2}}}, {"ids=" + (d / "t.bin") + ":u16"});
  EXPECT_EQ(ds.numSamples, 2);
  EXPECT_EQ(as<int32_t>(ds.inputs[0]),
            (std::vector<int32_t>{1000, 2000, 3000, 40000}));
}

TEST(Data, PermutationIsDeterministicPerEpoch) {
  auto a = epochPermutation(50, 7, 0), b = epochPermutation(50, 7, 0);
  auto c = epochPermutation(50, 7, 1), e = epochPermutation(50, 8, 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, e);
  std::vector<int64_t> sorted = a, iota(50);
  std::sort(sorted.begin(), sorted.end());
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
}

TEST(Data, BatcherDropsPartialBatchAndRollsOver) {
  TempDir d;
  std::vector<float> x(7);
  std::iota(x.begin(), x.end(), 0.0f);
  test::writeBytes(d / "x.npy", test::npyBytes("<f4", {7}, test::rawBytes(x)));
  Dataset ds = load({{"x", DType::F32, {3}}}, {"x=" + (d / "x.npy")});
  Batcher b(ds, 3, 0, /*shuffle=*/false);
  EXPECT_EQ(b.batchesPerEpoch(), 2);
  std::vector<std::vector<uint8_t>> out;
  std::vector<float> seen;
  for (int i = 0; i < 3; ++i) {
    b.next(out);
    for (float v : as<float>(out[0]))
      seen.push_back(v);
  }
  EXPECT_EQ(seen, (std::vector<float>{0, 1, 2, 3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(b.epoch(), 1);
  EXPECT_EQ(b.batchInEpoch(), 1);
  // Shuffled: each epoch's batches are the permutation's consecutive slices.
  Batcher s(ds, 3, 42, true);
  s.seek(1, 1);
  s.next(out);
  auto perm = epochPermutation(7, 42, 1);
  EXPECT_EQ(as<float>(out[0]),
            (std::vector<float>{float(perm[3]), float(perm[4]), float(perm[5])}));
}

// A position outside the data (a hostile checkpoint's) is an InputError,
// not a read past the data; the end of an epoch (batch == batchesPerEpoch,
// what a checkpoint after an epoch's last batch holds) rolls over.
TEST(Data, BatcherSeekRefusesPositionsOutsideTheData) {
  TempDir d;
  std::vector<float> x(7);
  std::iota(x.begin(), x.end(), 0.0f);
  test::writeBytes(d / "x.npy", test::npyBytes("<f4", {7}, test::rawBytes(x)));
  Dataset ds = load({{"x", DType::F32, {3}}}, {"x=" + (d / "x.npy")});
  Batcher b(ds, 3, 0, /*shuffle=*/false);
  EXPECT_THROW(b.seek(-1, 0), rt::InputError);
  EXPECT_THROW(b.seek(0, -3), rt::InputError);
  EXPECT_THROW(b.seek(0, 3), rt::InputError);
  EXPECT_THROW(b.seek(0, int64_t(1) << 40), rt::InputError);
  b.seek(4, 2);
  std::vector<std::vector<uint8_t>> out;
  b.next(out);
  EXPECT_EQ(as<float>(out[0]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(b.epoch(), 5);
  EXPECT_EQ(b.batchInEpoch(), 1);
}

// Data parallel: rank r of 2 at batch 2 takes slice r of each global batch
// of 4, so the shards side by side are one process's batches of 4.
TEST(Data, BatcherShardsAreSlicesOfTheGlobalBatch) {
  TempDir d;
  std::vector<float> x(10);
  std::iota(x.begin(), x.end(), 0.0f);
  test::writeBytes(d / "x.npy", test::npyBytes("<f4", {10}, test::rawBytes(x)));
  Dataset ds = load({{"x", DType::F32, {2}}}, {"x=" + (d / "x.npy")});
  Batcher whole(ds, 4, 5, true), r0(ds, 4, 5, true), r1(ds, 4, 5, true);
  r0.shard(0, 2);
  r1.shard(2, 2);
  std::vector<std::vector<uint8_t>> w, a, b;
  for (int i = 0; i < 5; ++i) { // 2 batches per epoch: crosses two epochs
    whole.next(w);
    r0.next(a);
    r1.next(b);
    std::vector<float> both = as<float>(a[0]), second = as<float>(b[0]);
    both.insert(both.end(), second.begin(), second.end());
    EXPECT_EQ(both, as<float>(w[0])) << i;
    EXPECT_EQ(r1.epoch(), whole.epoch());
    EXPECT_EQ(r1.batchInEpoch(), whole.batchInEpoch());
  }
}

// Each bad input: one line naming the file and the problem.
struct BadCase {
  const char *name;
  std::string file;    // written into the temp dir as x's data
  std::string content; // bytes
  const char *expect;  // substring of the message
};

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const InputError &e) {
    std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  return "(no error)";
}

TEST(DataErrors, EachCaseNamesFileAndProblem) {
  TempDir d;
  std::vector<float> f6(6, 1.0f);
  std::string good = test::npyBytes("<f4", {3, 2}, test::rawBytes(f6));
  std::vector<BadCase> cases = {
      {"missing", "", "", "no such file"},
      {"bad magic", "x.npy", "NOTNUMPY-and-some-more", "bad magic"},
      {"bad idx magic", "x.idx", std::string("\x01\x02\x08\x01", 4), "bad magic"},
      {"truncated", "x.npy", good.substr(0, good.size() - 3), "truncated"},
      {"per-sample shape", "x.npy",
       test::npyBytes("<f4", {2, 3}, test::rawBytes(f6)),
       "wrong per-sample shape"},
      {"big endian", "x.npy", test::npyBytes(">f4", {3, 2}, test::rawBytes(f6)),
       "big-endian"},
      {"unknown dtype", "x.npy", test::npyBytes("<c8", {3}, test::rawBytes(f6)),
       "unsupported .npy dtype"},
      {"truncated gz", "x.idx.gz", "", "truncated"},
      {"unknown format", "x.csv", "1,2", "unknown data format"},
  };
  {
    std::string gzPath = d / "full.gz";
    test::writeGzip(gzPath, test::idxBytes(0x0D, {3, 2}, std::string(24, 'a')));
    cases[7].content = test::readBytes(gzPath).substr(0, 20);
  }
  for (const BadCase &c : cases) {
    std::string path = d / (c.file.empty() ? "nothere.npy" : c.file);
    if (!c.file.empty())
      test::writeBytes(path, c.content);
    std::string msg = errorOf([&] {
      load({{"x", DType::F32, {1, 2}}}, {"x=" + path});
    });
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
  }
}

// Integer inputs are checked against their compiled bound when loaded; the
// error names the file the values came from, shifted targets included.
TEST(DataErrors, ValuesOutsideTheBound) {
  TempDir d;
  std::string bytes;
  for (int i = 0; i < 11; ++i)
    bytes += char(10 + i);
  std::string text = d / "text.txt";
  test::writeBytes(text, bytes);
  TensorInfo tokens{"tokens", DType::I32, {2, 3}, 20, std::nullopt,
                    "rows of the embedding table"};
  TensorInfo targets{"targets", DType::I64, {2, 3}, 20, -100,
                     "classes of the cross_entropy"};
  EXPECT_EQ(load({tokens, targets}, {"tokens=" + text}, 3).numSamples, 3);
  targets.valueBound = 19; // targets are 11..19
  EXPECT_EQ(errorOf([&] { load({tokens, targets}, {"tokens=" + text}, 3); }),
            text + ": value 19 at sample 2 is outside [0, 19) (classes of the "
                   "cross_entropy)");
  tokens.valueBound = 12; // tokens are 10..18
  EXPECT_EQ(errorOf([&] { load({tokens, targets}, {"tokens=" + text}, 3); }),
            text + ": value 12 at sample 0 is outside [0, 12) (rows of the "
                   "embedding table)");
  // The ignore value passes; other negatives do not.
  std::vector<int32_t> l = {1, -100, 0, -1};
  std::string npy = d / "l.npy";
  test::writeBytes(npy, test::npyBytes("<i4", {4}, test::rawBytes(l)));
  TensorInfo label{"label", DType::I32, {1}, 2, -100, ""};
  EXPECT_EQ(errorOf([&] { load({label}, {"label=" + npy}); }),
            npy + ": value -1 at sample 3 is outside [0, 2)");
  label.ignoreValue = std::nullopt;
  EXPECT_EQ(errorOf([&] { load({label}, {"label=" + npy}); }),
            npy + ": value -100 at sample 1 is outside [0, 2)");
}

TEST(DataErrors, DtypeCountAndInputNames) {
  TempDir d;
  std::vector<float> f3 = {0, 1, 2};
  std::vector<int64_t> i2 = {0, 1};
  test::writeBytes(d / "f.npy", test::npyBytes("<f4", {3}, test::rawBytes(f3)));
  test::writeBytes(d / "i.npy", test::npyBytes("<i8", {2}, test::rawBytes(i2)));
  std::vector<TensorInfo> in = {{"x", DType::F32, {1}},
                                {"label", DType::I64, {1}}};
  std::string m = errorOf([&] {
    load(in, {"x=" + (d / "f.npy"), "label=" + (d / "f.npy")});
  });
  EXPECT_NE(m.find((d / "f.npy") + ": wrong dtype: f4 data for integer input "
                                   "'label i64[1]'"),
            std::string::npos) << m;
  m = errorOf([&] { load(in, {"x=" + (d / "f.npy"), "label=" + (d / "i.npy")}); });
  EXPECT_NE(m.find((d / "i.npy") + ": sample count mismatch: 2 samples"),
            std::string::npos) << m;
  m = errorOf([&] { load(in, {"x=" + (d / "f.npy")}); });
  EXPECT_NE(m.find("--data: no data for input 'label i64[1]'"),
            std::string::npos) << m;
  m = errorOf([&] { load(in, {"x=" + (d / "f.npy"), "y=" + (d / "f.npy")}); });
  EXPECT_NE(m.find("--data: the model has no input 'y'"), std::string::npos) << m;
  m = errorOf([&] { parseDataSpecs({"nopath"}, "--data"); });
  EXPECT_NE(m.find("--data: expected NAME=PATH"), std::string::npos) << m;
  test::writeBytes(d / "t.bin", "abcdefgh");
  m = errorOf([&] {
    load({{"tokens", DType::I32, {1, 4}}}, {"tokens=" + (d / "t.bin")}, 8);
  });
  EXPECT_NE(m.find("compiled with context 4"), std::string::npos) << m;
  m = errorOf([&] {
    load({{"x", DType::F32, {4}}}, {"x=" + (d / "f.npy")});
  });
  EXPECT_NE(m.find("fewer than one batch of 4"), std::string::npos) << m;
}

} // namespace

namespace {

// The Debian dataset-fashion-mnist package, as the README's first command
// uses it.
TEST(Data, FashionMnistFromDebianPackage) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(dir + "train-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset ds = load({{"image", DType::F32, {64, 1, 28, 28}},
                     {"label", DType::I64, {64}}},
                    {"image=" + dir + "train-images-idx3-ubyte.gz",
                     "label=" + dir + "train-labels-idx1-ubyte.gz"});
  EXPECT_EQ(ds.numSamples, 60000);
  auto labels = as<int64_t>(ds.inputs[1]);
  EXPECT_EQ(std::vector<int64_t>(labels.begin(), labels.begin() + 6),
            (std::vector<int64_t>{9, 0, 0, 3, 0, 2}));
  auto img = as<float>(ds.inputs[0]);
  for (float v : img)
    ASSERT_TRUE(v >= 0.0f && v <= 1.0f);
}

} // namespace

// --no-drop-last: 7 samples in batches of 3 end each epoch with a batch of
// 1 real sample padded with copies of it (slot k holds real sample k mod R);
// next() says how many are real.
TEST(Data, BatcherKeepsPartialBatchPadded) {
  TempDir d;
  std::vector<float> x(7);
  std::iota(x.begin(), x.end(), 0.0f);
  test::writeBytes(d / "x.npy", test::npyBytes("<f4", {7}, test::rawBytes(x)));
  Dataset ds = load({{"x", DType::F32, {1}}}, {"x=" + (d / "x.npy")});
  Batcher b(ds, 3, 0, /*shuffle=*/false);
  b.keepPartialBatch();
  EXPECT_EQ(b.batchesPerEpoch(), 3);
  std::vector<std::vector<uint8_t>> out;
  EXPECT_EQ(b.next(out), 3);
  EXPECT_EQ(b.next(out), 3);
  EXPECT_EQ(b.next(out), 1);
  EXPECT_EQ(as<float>(out[0]), (std::vector<float>{6, 6, 6}));
  EXPECT_EQ(b.next(out), 3); // the next epoch
  EXPECT_EQ(b.epoch(), 1);
}

// Data parallel: 11 samples in global batches of 6 (2 ranks x 3) leave 5 for
// the last one, split 3 + 2 (rank 0 takes one more), each rank's slice
// padded to 3. A remainder below the number of ranks is dropped.
TEST(Data, BatcherSplitsPartialBatchOverRanks) {
  TempDir d;
  std::vector<float> x(11);
  std::iota(x.begin(), x.end(), 0.0f);
  test::writeBytes(d / "x.npy",
                   test::npyBytes("<f4", {11}, test::rawBytes(x)));
  Dataset ds = load({{"x", DType::F32, {1}}}, {"x=" + (d / "x.npy")});
  Batcher r0(ds, 6, 0, false), r1(ds, 6, 0, false);
  r0.shard(0, 3);
  r1.shard(3, 3);
  r0.keepPartialBatch(2);
  r1.keepPartialBatch(2);
  EXPECT_EQ(r0.batchesPerEpoch(), 2);
  std::vector<std::vector<uint8_t>> out;
  r0.seek(0, 1);
  r1.seek(0, 1);
  EXPECT_EQ(r0.next(out), 3);
  EXPECT_EQ(as<float>(out[0]), (std::vector<float>{6, 7, 8}));
  EXPECT_EQ(r1.next(out), 2);
  EXPECT_EQ(as<float>(out[0]), (std::vector<float>{9, 10, 9}));
  // 7 samples: a remainder of 1 for 2 ranks.
  Dataset seven = ds;
  seven.numSamples = 7;
  Batcher s(seven, 6, 0, false);
  s.shard(3, 3);
  s.keepPartialBatch(2);
  EXPECT_EQ(s.batchesPerEpoch(), 1);
}
