//===- NcclTest.cpp - The NCCL backend at world size 1 --------------------===//
//
// Runs where a GPU is present (one per lent machine); skips otherwise.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/GradBucketer.h"
#include "runtime/comm/NcclCommunicator.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

using namespace ampc::rt;

namespace {

#define SKIP_WITHOUT_GPU()                                                                  \
  if (cudaDeviceCountOrZero() == 0)                                                         \
  GTEST_SKIP() << "no CUDA device visible; the NCCL backend runs only with a GPU"

TEST(Nccl, BackendIsLinkedIn) { EXPECT_TRUE(ncclCompiledIn()); }

// Device buffer <-> host vector.
struct DeviceFloats {
  float *p = nullptr;
  size_t n;
  explicit DeviceFloats(const std::vector<float> &h) : n(h.size()) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&p), n * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(p); }
  std::vector<float> host() const {
    std::vector<float> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

TEST(Nccl, AllreduceOnDeviceBuffers) {
  SKIP_WITHOUT_GPU();
  auto c = createCommunicator(Backend::Nccl, commOptionsFromEnv());
  ASSERT_EQ(c->backend(), Backend::Nccl);
  ASSERT_EQ(c->memory(), Memory::Device);
  int w = c->size();
  std::vector<float> h(1 << 20);
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = float(i % 100) - 50.0f;
  DeviceFloats d(h);
  c->allreduceSum(d.p, d.n);
  auto r = d.host();
  for (size_t i = 0; i < h.size(); ++i)
    ASSERT_EQ(r[i], h[i] * float(w)) << i;
  int32_t flag = c->rank() == 0, *df = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&df), 4), cudaSuccess);
  cudaMemcpy(df, &flag, 4, cudaMemcpyHostToDevice);
  c->allreduceMax(df, 1);
  cudaMemcpy(&flag, df, 4, cudaMemcpyDeviceToHost);
  cudaFree(df);
  EXPECT_EQ(flag, 1);
  int32_t hostFlag = 1;
  c->hostAllreduce(&hostFlag, 1, CommType::I32, ReduceOp::Sum);
  EXPECT_EQ(hostFlag, w);
}

TEST(Nccl, BucketerStagesAndSumsDeviceGradients) {
  SKIP_WITHOUT_GPU();
  auto c = createCommunicator(Backend::Nccl, commOptionsFromEnv());
  int w = c->size();
  std::vector<std::vector<float>> h = {std::vector<float>(3000), std::vector<float>(7),
                                       std::vector<float>(100000)};
  std::vector<std::unique_ptr<DeviceFloats>> d;
  std::vector<GradBuffer> bufs;
  for (size_t t = 0; t < h.size(); ++t) {
    for (size_t i = 0; i < h[t].size(); ++i)
      h[t][i] = float((i + t) % 9) * 0.25f;
    d.push_back(std::make_unique<DeviceFloats>(h[t]));
    bufs.push_back({d.back()->p, d.back()->n});
  }
  BucketOptions o;
  o.bucketBytes = 4096;
  o.average = false; // the device path sums; Model::step divides
  GradBucketer b(*c, bufs, o);
  EXPECT_GT(b.numBuckets(), 10u);
  for (size_t t = bufs.size(); t-- > 0;)
    b.markReady(t);
  b.finish();
  for (size_t t = 0; t < h.size(); ++t) {
    auto r = d[t]->host();
    for (size_t i = 0; i < r.size(); ++i)
      ASSERT_EQ(r[i], h[t][i] * float(w)) << t << ":" << i;
  }
}

// The overlapped path (DataParallel with a GPU model): the backward is
// queued on a producer stream, each gradient's ready event recorded after
// its last write, and only then marked (the model hands the events over
// after queueing a whole graph). The buckets must wait for those events
// alone, packing, reducing and unpacking: not for work queued after them (a
// 2 s tail here, which a wait on the producer stream's current work would
// include), and not less (the
// buffers are separate allocations, so buckets are packed on the comm
// stream: packing before the writes would reduce the zeros they held).
void sleepMs(void *ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int *>(ms)));
}

TEST(Nccl, BucketerWaitsForReadyEventsOnly) {
  SKIP_WITHOUT_GPU();
  auto c = createCommunicator(Backend::Nccl, commOptionsFromEnv());
  int w = c->size();
  cudaStream_t producer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  c->setProducerStream(producer);
  std::vector<size_t> sizes = {3000, 7, 100000};
  std::vector<std::unique_ptr<DeviceFloats>> d;
  std::vector<float *> pinned(sizes.size());
  std::vector<cudaEvent_t> ready(sizes.size());
  std::vector<GradBuffer> bufs;
  for (size_t t = 0; t < sizes.size(); ++t) {
    d.push_back(std::make_unique<DeviceFloats>(std::vector<float>(sizes[t], 0.0f)));
    bufs.push_back({d.back()->p, d.back()->n});
    ASSERT_EQ(cudaMallocHost(reinterpret_cast<void **>(&pinned[t]), sizes[t] * 4), cudaSuccess);
    for (size_t i = 0; i < sizes[t]; ++i)
      pinned[t][i] = float((i + t) % 9) * 0.25f;
    ASSERT_EQ(cudaEventCreateWithFlags(&ready[t], cudaEventDisableTiming), cudaSuccess);
  }
  BucketOptions o;
  o.bucketBytes = 4096;
  o.average = false;
  GradBucketer b(*c, bufs, o);
  bool packed = false;
  for (size_t k = 0; k < b.numBuckets(); ++k)
    packed = packed || !b.inPlace(k);
  ASSERT_TRUE(packed);

  static int head = 200, tail = 2000;
  ASSERT_EQ(cudaLaunchHostFunc(producer, sleepMs, &head), cudaSuccess);
  for (size_t t = sizes.size(); t-- > 0;) {
    ASSERT_EQ(cudaMemcpyAsync(bufs[t].data, pinned[t], sizes[t] * 4, cudaMemcpyHostToDevice,
                              producer),
              cudaSuccess);
    ASSERT_EQ(cudaEventRecord(ready[t], producer), cudaSuccess);
  }
  ASSERT_EQ(cudaLaunchHostFunc(producer, sleepMs, &tail), cudaSuccess);
  auto t0 = std::chrono::steady_clock::now();
  for (size_t t = sizes.size(); t-- > 0;)
    b.markReady(t, ready[t]);
  b.finish();
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(sec, 1.5) << "the buckets waited for the producer's later work";
  for (size_t t = 0; t < sizes.size(); ++t) {
    auto r = d[t]->host();
    for (size_t i = 0; i < r.size(); ++i)
      ASSERT_EQ(r[i], pinned[t][i] * float(w)) << t << ":" << i;
  }
  ASSERT_EQ(cudaStreamSynchronize(producer), cudaSuccess);
  for (size_t t = 0; t < sizes.size(); ++t) {
    cudaEventDestroy(ready[t]);
    cudaFreeHost(pinned[t]);
  }
  cudaStreamDestroy(producer);
}

} // namespace
