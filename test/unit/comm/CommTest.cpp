//===- CommTest.cpp - Collectives, bucketing and AMP agreement ------------===//
//
// Runs under `mpirun -np 2` (MPI backend) and as a plain process (the
// single-process fallback); expected values are written for any world size.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/AmpSync.h"
#include "runtime/comm/Communicator.h"
#include "runtime/comm/BucketLayout.h"
#include "runtime/comm/GradBucketer.h"
#include "runtime/numerics/Half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

using namespace ampc::rt;

namespace {

Communicator *gComm = nullptr;
Communicator &comm() { return *gComm; }
int W() { return comm().size(); }
int R() { return comm().rank(); }

// FNV-1a over the bytes, to compare buffers across ranks.
int64_t hashBytes(const void *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 1099511628211ull;
  return int64_t(h >> 1);
}

// True on every rank iff every rank passed the same value.
bool sameOnAllRanks(int64_t v) {
  int64_t mm[2] = {v, -v};
  comm().hostAllreduce(mm, 2, CommType::I64, ReduceOp::Max);
  return mm[0] == -mm[1];
}

TEST(Comm, BackendFollowsTheLauncher) {
  if (launchedByMpi()) {
    EXPECT_EQ(comm().backend(), Backend::Mpi);
    EXPECT_EQ(W(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  } else {
    EXPECT_EQ(comm().backend(), Backend::Local);
    EXPECT_EQ(W(), 1);
  }
  EXPECT_GE(R(), 0);
  EXPECT_LT(R(), W());
  EXPECT_EQ(comm().memory(), Memory::Host);
  EXPECT_EQ(comm().timeoutSeconds(), commOptionsFromEnv().timeoutSeconds);
  if (const char *t = std::getenv("AMPC_COMM_TIMEOUT"))
    EXPECT_EQ(comm().timeoutSeconds(), std::atof(t));
  else
    EXPECT_EQ(comm().timeoutSeconds(), 300.0);
}

TEST(Comm, LocalBackendIsTheIdentity) {
  auto local = createCommunicator(Backend::Local);
  EXPECT_EQ(local->size(), 1);
  EXPECT_EQ(local->rank(), 0);
  float x[2] = {1.5f, -2.0f};
  local->allreduceSum(x, 2);
  EXPECT_EQ(x[0], 1.5f);
  EXPECT_EQ(x[1], -2.0f);
}

TEST(Comm, AllreduceSumFloatSeveralSizes) {
  for (size_t n : {size_t(1), size_t(7), size_t(1000), size_t(1 << 20) + 3}) {
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i)
      x[i] = float((R() + 1) * int(i % 13)) + 0.5f;
    comm().allreduceSum(x.data(), n);
    float tri = float(W() * (W() + 1) / 2);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(x[i], tri * float(i % 13) + 0.5f * float(W())) << "n=" << n << " i=" << i;
  }
}

TEST(Comm, AllreduceSumCounters) {
  double d[2] = {0.25 * (R() + 1), 1e15};
  comm().allreduceSum(d, 2);
  EXPECT_EQ(d[0], 0.25 * W() * (W() + 1) / 2);
  EXPECT_EQ(d[1], 1e15 * W());
  int32_t i32[3] = {R(), 1, -7};
  comm().allreduceSum(i32, 3);
  EXPECT_EQ(i32[0], W() * (W() - 1) / 2);
  EXPECT_EQ(i32[1], W());
  EXPECT_EQ(i32[2], -7 * W());
  int64_t i64 = int64_t(1) << 40;
  comm().allreduceSum(&i64, 1);
  EXPECT_EQ(i64, (int64_t(1) << 40) * W());
}

TEST(Comm, IntFlagMaxMin) {
  // Only the last rank raises the flag.
  int32_t flag = R() == W() - 1;
  int32_t mx = flag, mn = flag;
  comm().allreduceMax(&mx, 1);
  comm().allreduceMin(&mn, 1);
  EXPECT_EQ(mx, 1);
  EXPECT_EQ(mn, W() == 1 ? 1 : 0);
  float f = float(R()) - 0.5f;
  float fmx = f, fmn = f;
  comm().allreduceMax(&fmx, 1);
  comm().allreduceMin(&fmn, 1);
  EXPECT_EQ(fmx, float(W() - 1) - 0.5f);
  EXPECT_EQ(fmn, -0.5f);
}

TEST(Comm, BroadcastFromLastRank) {
  int root = W() - 1;
  std::vector<unsigned char> bytes(4099);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = R() == root ? (unsigned char)(i * 7 + 3) : 0;
  comm().broadcast(bytes.data(), bytes.size(), root);
  for (size_t i = 0; i < bytes.size(); ++i)
    ASSERT_EQ(bytes[i], (unsigned char)(i * 7 + 3)) << i;
  comm().barrier();
}

TEST(Comm, ResultsAreBitwiseIdenticalOnEveryRank) {
  // Values whose sums round: identical bits everywhere is what lets every
  // rank take the same found_inf / clip decision without a vote.
  std::vector<float> x(100003);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(float(i) * 0.37f + float(R())) * 1e-3f + 1.0f / float(i + 1 + R());
  comm().allreduceSum(x.data(), x.size());
  EXPECT_TRUE(sameOnAllRanks(hashBytes(x.data(), x.size() * sizeof(float))));
}

TEST(Comm, CommunicatorsCanBeCreatedRepeatedly) {
  for (int k = 0; k < 3; ++k) {
    auto c = createCommunicator(launchedByMpi() ? Backend::Mpi : Backend::Local,
                                commOptionsFromEnv());
    int32_t v = 1;
    c->allreduceSum(&v, 1);
    EXPECT_EQ(v, W());
  }
}

// --- GradBucketer ----------------------------------------------------------

// Separate allocations (staged buckets) of the given sizes, filled with
// g_r[t][i] = (r + 1) * ((i + t) % 7): sums and averages are exact.
struct Grads {
  std::vector<std::vector<float>> data;
  explicit Grads(const std::vector<size_t> &sizes) {
    for (size_t t = 0; t < sizes.size(); ++t) {
      data.emplace_back(sizes[t]);
      for (size_t i = 0; i < sizes[t]; ++i)
        data[t][i] = float((R() + 1) * int((i + t) % 7));
    }
  }
  std::vector<GradBuffer> buffers() {
    std::vector<GradBuffer> b;
    for (auto &v : data)
      b.push_back({v.data(), v.size()});
    return b;
  }
  // Sum over ranks of (r + 1) is W(W+1)/2.
  void expect(bool average) {
    float tri = float(W() * (W() + 1) / 2);
    for (size_t t = 0; t < data.size(); ++t)
      for (size_t i = 0; i < data[t].size(); ++i) {
        float want = tri * float((i + t) % 7);
        if (average)
          want = want / float(W());
        ASSERT_EQ(data[t][i], want) << "buffer " << t << " element " << i;
      }
  }
};

// Every element lands in exactly one bucket, in order, none over the cap.
void expectLayout(const GradBucketer &b, const std::vector<size_t> &sizes, size_t bucketBytes) {
  size_t cap = std::max<size_t>(1, bucketBytes / 4);
  size_t t = 0, off = 0;
  for (size_t k = 0; k < b.numBuckets(); ++k) {
    size_t count = 0;
    for (const auto &s : b.segments(k)) {
      while (t < sizes.size() && off == sizes[t]) {
        ++t;
        off = 0;
      }
      ASSERT_EQ(s.buffer, t);
      ASSERT_EQ(s.offset, off);
      off += s.count;
      count += s.count;
    }
    ASSERT_LE(count, cap);
    ASSERT_GT(count, 0u);
    if (k + 1 < b.numBuckets())
      ASSERT_EQ(count, cap) << "only the last bucket may be partial";
  }
  while (t < sizes.size() && off == sizes[t]) {
    ++t;
    off = 0;
  }
  EXPECT_EQ(t, sizes.size());
}

TEST(Bucketer, AverageAndSumForSeveralBucketSizes) {
  for (size_t bytes : {size_t(4), size_t(64), size_t(1024), size_t(25) << 20}) {
    // One float per bucket is one collective per element: keep that small.
    std::vector<size_t> sizes = {3, 1000, 1, bytes < 1024 ? 100u : 70000u, 0, 5};
    for (bool average : {true, false}) {
      Grads g(sizes);
      BucketOptions o;
      o.bucketBytes = bytes;
      o.average = average;
      GradBucketer b(comm(), g.buffers(), o);
      expectLayout(b, sizes, bytes);
      b.allreduce();
      SCOPED_TRACE("bucketBytes=" + std::to_string(bytes));
      g.expect(average);
    }
  }
}

TEST(Bucketer, BufferLargerThanABucketIsSplit) {
  std::vector<size_t> sizes = {70000};
  Grads g(sizes);
  BucketOptions o;
  o.bucketBytes = 1024; // 256 floats
  GradBucketer b(comm(), g.buffers(), o);
  EXPECT_EQ(b.numBuckets(), (70000u + 255) / 256);
  for (size_t k = 0; k < b.numBuckets(); ++k)
    EXPECT_TRUE(b.inPlace(k)); // one piece of one buffer: no staging
  b.allreduce();
  g.expect(true);
}

TEST(Bucketer, ManyTinyBuffersShareBuckets) {
  std::vector<size_t> sizes;
  for (int i = 0; i < 1000; ++i)
    sizes.push_back(1 + i % 3);
  Grads g(sizes);
  BucketOptions o;
  o.bucketBytes = 256;
  GradBucketer b(comm(), g.buffers(), o);
  EXPECT_EQ(b.numBuckets(), (1999u + 63) / 64); // 1999 floats, 64 per bucket
  expectLayout(b, sizes, o.bucketBytes);
  // Two steps: the bucketer rearms after finish().
  b.allreduce();
  g.expect(true);
  Grads g2(sizes);
  for (size_t t = 0; t < sizes.size(); ++t)
    std::memcpy(g.data[t].data(), g2.data[t].data(), sizes[t] * sizeof(float));
  b.allreduce();
  g.expect(true);
}

TEST(Bucketer, AdjacentBuffersAreReducedInPlace) {
  // One arena sliced into buffers, like the generated code's memory plan.
  std::vector<size_t> sizes = {10, 20, 30, 40};
  std::vector<float> arena(100);
  for (size_t i = 0; i < arena.size(); ++i)
    arena[i] = float((R() + 1) * int(i % 5));
  std::vector<GradBuffer> bufs;
  size_t at = 0;
  for (size_t n : sizes) {
    bufs.push_back({arena.data() + at, n});
    at += n;
  }
  BucketOptions o;
  o.bucketBytes = 50 * 4;
  GradBucketer b(comm(), bufs, o);
  ASSERT_EQ(b.numBuckets(), 2u);
  EXPECT_TRUE(b.inPlace(0));
  EXPECT_TRUE(b.inPlace(1));
  b.allreduce();
  float tri = float(W() * (W() + 1) / 2);
  for (size_t i = 0; i < arena.size(); ++i)
    ASSERT_EQ(arena[i], tri * float(i % 5) / float(W())) << i;

  // Reversed views of the same arena are not adjacent: staged.
  std::vector<GradBuffer> rev(bufs.rbegin(), bufs.rend());
  GradBucketer r(comm(), rev, o);
  EXPECT_FALSE(r.inPlace(0));
}

TEST(Bucketer, MarkReadyInAnyOrderGivesTheSameResult) {
  std::vector<size_t> sizes = {300, 5, 1000, 2, 64};
  Grads ref(sizes), rev(sizes);
  BucketOptions o;
  o.bucketBytes = 512;
  GradBucketer a(comm(), ref.buffers(), o);
  a.allreduce();
  GradBucketer b(comm(), rev.buffers(), o);
  // The backward finishes the last parameters first.
  for (size_t t = sizes.size(); t-- > 0;)
    b.markReady(t);
  b.finish();
  for (size_t t = 0; t < sizes.size(); ++t)
    ASSERT_EQ(std::memcmp(ref.data[t].data(), rev.data[t].data(), sizes[t] * 4), 0) << t;
  rev.expect(true);
}

// Overlap: a bucket starts inside markReady as soon as its buffers are all
// ready and every earlier bucket started; finish() starts the rest. Sizes
// {300, 5, 1000, 2, 64} at 128 elements a bucket: buffer 0 fills buckets 0-1
// and part of 2; bucket 2 also takes buffer 1 and 79 of buffer 2; buckets
// 3-9 lie in buffer 2; bucket 10 holds its last 25 with buffers 3 and 4.
// startedEarly() counts those started before the last buffer was ready.
TEST(Bucketer, StartsBucketsAsTheirBuffersBecomeReady) {
  std::vector<size_t> sizes = {300, 5, 1000, 2, 64};
  Grads ref(sizes), got(sizes);
  BucketOptions o;
  o.bucketBytes = 512;
  GradBucketer a(comm(), ref.buffers(), o);
  a.allreduce();
  EXPECT_EQ(a.startedEarly(), 0u);
  EXPECT_EQ(a.startedTotal(), 11u);

  GradBucketer b(comm(), got.buffers(), o);
  ASSERT_EQ(b.numBuckets(), 11u);
  int event = 0; // host buffers: a ready event is ignored
  std::vector<size_t> early, total;
  for (size_t t = 0; t < sizes.size(); ++t) {
    b.markReady(t, &event);
    early.push_back(b.startedEarly());
    total.push_back(b.startedTotal());
  }
  EXPECT_EQ(early, (std::vector<size_t>{2, 2, 10, 10, 10}));
  EXPECT_EQ(total, (std::vector<size_t>{2, 2, 10, 10, 11}));
  b.finish();
  EXPECT_EQ(b.startedTotal(), 11u);
  for (size_t t = 0; t < sizes.size(); ++t)
    ASSERT_EQ(std::memcmp(ref.data[t].data(), got.data[t].data(), sizes[t] * 4), 0) << t;

  // Next step, the backward's order (last buffer first): nothing can start
  // before buffer 0, the last one ready; finish() starts a step's leftovers.
  Grads again(sizes);
  for (size_t t = 0; t < sizes.size(); ++t)
    std::copy(again.data[t].begin(), again.data[t].end(), got.data[t].begin());
  for (size_t t = sizes.size(); t-- > 1;)
    b.markReady(t);
  EXPECT_EQ(b.startedTotal(), 11u);
  b.markReady(0);
  EXPECT_EQ(b.startedTotal(), 22u);
  EXPECT_EQ(b.startedEarly(), 10u);
  b.finish();
  for (size_t t = 0; t < sizes.size(); ++t)
    ASSERT_EQ(std::memcmp(ref.data[t].data(), got.data[t].data(), sizes[t] * 4), 0) << t;
  b.markReady(4);
  b.finish();
  EXPECT_EQ(b.startedEarly(), 10u);
  EXPECT_EQ(b.startedTotal(), 33u);
}

// Half-precision reduction; every rank contributes the same |value|, so the
// expected results hold for any world size.
std::vector<float> reduceHalf(ReducePrecision p, float predivide, bool average,
                              std::vector<float> values) {
  BucketOptions o;
  o.precision = p;
  o.predivide = predivide;
  o.average = average;
  GradBucketer b(comm(), {{values.data(), values.size()}}, o);
  EXPECT_FALSE(b.inPlace(0)); // packed into a half staging buffer
  b.allreduce();
  return values;
}

TEST(Bucketer, HalfReductionWithPredivide) {
  float w = float(W());
  // 70000 overflows binary16 (max 65504) unless pre-divided: p = 4 gives
  // half(17500) = 17504 (spacing 16); sum 17504 W; average 17504 W / (W/4).
  auto r = reduceHalf(ReducePrecision::F16, 4.0f, true, {70000.0f});
  EXPECT_EQ(r[0], 17504.0f * w / (w / 4.0f));
  if (W() <= 2)
    EXPECT_EQ(r[0], 70016.0f);
  r = reduceHalf(ReducePrecision::F16, 1.0f, true, {70000.0f});
  EXPECT_TRUE(std::isinf(r[0]) && r[0] > 0) << r[0];
  // Sum mode restores the pre-divided scale: float(h) * p.
  r = reduceHalf(ReducePrecision::F16, 4.0f, false, {70000.0f});
  if (W() <= 2)
    EXPECT_EQ(r[0], 17504.0f * w * 4.0f);
  // Precision is lost on the wire: 1 + 2^-11 rounds (ties to even) to 1.
  r = reduceHalf(ReducePrecision::F16, 1.0f, true, {1.0f + 0x1p-11f, 3.0f, -0.25f});
  EXPECT_EQ(r[0], 1.0f);
  EXPECT_EQ(r[1], 3.0f);
  EXPECT_EQ(r[2], -0.25f);
  // bfloat16 keeps the range, loses more digits: 1 + 2^-9 -> 1; 70000 ->
  // 70144 (spacing 512 at 2^16; 70000 is 368 above 69632 so rounds up).
  r = reduceHalf(ReducePrecision::BF16, 1.0f, true, {1.0f + 0x1p-9f, 70000.0f});
  EXPECT_EQ(r[0], 1.0f);
  if (W() <= 2)
    EXPECT_EQ(r[1], 70144.0f);
}

TEST(Bucketer, HalfSumRoundsEachAddition) {
  // Ranks contribute 2048 and 1 (W = 2): 2049 is not a binary16 (spacing 2
  // above 2048) and ties to even: 2048. FP32 reduction keeps 2049.
  if (W() != 2)
    GTEST_SKIP() << "needs exactly 2 ranks (run under mpirun -np 2)";
  std::vector<float> v = {R() == 0 ? 2048.0f : 1.0f};
  auto h = reduceHalf(ReducePrecision::F16, 1.0f, false, v);
  EXPECT_EQ(h[0], 2048.0f);
  std::vector<float> f = v;
  GradBucketer b(comm(), {{f.data(), 1}}, BucketOptions{.average = false});
  b.allreduce();
  EXPECT_EQ(f[0], 2049.0f);
}

// --- AMP agreement ---------------------------------------------------------

TEST(AmpSync, LossIsSummedAndFoundInfIsGlobal) {
  float loss = float(R() + 1) * 0.5f;
  reduceLoss(comm(), &loss);
  EXPECT_EQ(loss, 0.5f * float(W() * (W() + 1) / 2));
  // Overflow on the last rank's shard only: every rank sees it.
  EXPECT_EQ(globalFoundInf(comm(), R() == W() - 1 ? 1 : 0), 1);
  EXPECT_EQ(globalFoundInf(comm(), 0), 0);
}

TEST(AmpSync, AgreeingRanksPassTheCheck) {
  StepStats s;
  s.skipped = 1;
  s.gradNorm = INFINITY;
  s.clipCoef = 0.0f;
  checkAgreement(comm(), s); // aborts the job on disagreement
  s.skipped = 0;
  s.gradNorm = 3.25f;
  s.clipCoef = 0.30769f;
  checkAgreement(comm(), s);
  SUCCEED();
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto c = createCommunicator(Backend::Auto, commOptionsFromEnv());
  gComm = c.get();
  int rc = RUN_ALL_TESTS();
  // Fail on every rank if any rank failed, so mpirun reports it once.
  int32_t worst = rc;
  c->allreduceMax(&worst, 1);
  gComm = nullptr;
  c.reset();
  return worst;
}

// --bucket-mb as the binary and `ampc cost` take it, and the bucket count
// they refuse above kMaxBuckets without building the layout.
TEST(BucketLayout, SizeOfMbAndCountWithoutTheLayout) {
  EXPECT_EQ(bucketBytesOfMb(25), size_t(25) << 20);
  EXPECT_EQ(bucketBytesOfMb(1e-9), 4u); // at least one float
  EXPECT_EQ(bucketBytesOfMb(1048576), size_t(1) << 40);
  for (double bad : {0.0, -1.0, 1048577.0, 1e30,
                     std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()})
    EXPECT_FALSE(bucketBytesOfMb(bad).has_value()) << bad;
  const std::vector<size_t> counts = {3, 0, 7, 64, 1, 129};
  for (size_t cap : {1, 2, 5, 64, 100, 204, 1000})
    EXPECT_EQ(bucketCount(counts, cap), bucketLayout(counts, cap).size())
        << cap;
  EXPECT_EQ(bucketCount({}, 8), 0u);
}
