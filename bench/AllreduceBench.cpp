//===- AllreduceBench.cpp - FP32 sum all-reduce: algbw and busbw --------===//
//
// ampc-allreduce-bench [--gpu] [--sizes=1M,4M,...] [--iters=N] [--warmup=N]
//                      [--tensors=K] [--bucket-mb=M]
//
// For each message size S (bytes of FP32) times two ways of all-reducing it:
//   bucketed  GradBucketer over K gradient buffers of S/K bytes with the
//             default 25 MiB buckets (FP32 sum, no average): what training
//             does once per optimizer step;
//   raw       one Communicator::allreduceSum of the whole S bytes.
// Every iteration starts after a barrier; a rank's time for it is host
// std::chrono around the blocking call (MPI, host buffers) or CUDA events on
// the communication stream (NCCL, --gpu, device buffers). An iteration's time
// is the max over ranks; the table shows the median over --iters after
// --warmup untimed ones, with nccl-tests' bandwidths:
//   algbw = S / time,   busbw = algbw * 2(n-1)/n   (n = world size).
// busbw is the per-link traffic of a ring all-reduce; it is 0 by definition
// for n = 1, so only algbw is printed there. Before timing, each size is
// checked once: rank r fills r+1, the result must be n(n+1)/2 everywhere.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"
#include "runtime/comm/GradBucketer.h"

#ifdef AMPC_BENCH_NCCL
#include "runtime/comm/NcclCommunicator.h"
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace ampc::rt;

namespace {

struct Args {
  bool gpu = false;
  std::vector<size_t> sizes;
  int iters = 20;
  int warmup = 5;
  size_t tensors = 1;
  size_t bucketMb = 25;
};

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr,
               "ampc-allreduce-bench: %s\n"
               "usage: ampc-allreduce-bench [--gpu] [--sizes=1M,4M,...] [--iters=N]\n"
               "       [--warmup=N] [--tensors=K] [--bucket-mb=M]   (sizes: bytes, K/M/G suffix)\n",
               why.c_str());
  std::exit(2);
}

size_t parseSize(const std::string &s) {
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  std::string suf(end);
  size_t mul = suf.empty() ? 1 : suf == "K" ? 1 << 10 : suf == "M" ? 1 << 20 : suf == "G" ? 1 << 30 : 0;
  if (end == s.c_str() || mul == 0 || v == 0)
    usage("bad size '" + s + "'");
  size_t bytes = size_t(v) * mul;
  if (bytes % sizeof(float))
    usage("size '" + s + "' is not a whole number of FP32 elements");
  return bytes;
}

long parsePositive(const std::string &flag, const std::string &v) {
  char *end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end || n <= 0)
    usage("bad value for " + flag + ": '" + v + "'");
  return n;
}

Args parseArgs(int argc, char **argv) {
  Args a;
  std::string sizes;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto eq = s.find('=');
    std::string key = s.substr(0, eq), val = eq == std::string::npos ? "" : s.substr(eq + 1);
    if (key == "--gpu" && eq == std::string::npos)
      a.gpu = true;
    else if (key == "--sizes")
      sizes = val;
    else if (key == "--iters")
      a.iters = int(parsePositive(key, val));
    else if (key == "--warmup")
      a.warmup = int(parsePositive(key, val)); // >= 1: the first call pays setup
    else if (key == "--tensors")
      a.tensors = size_t(parsePositive(key, val));
    else if (key == "--bucket-mb")
      a.bucketMb = size_t(parsePositive(key, val));
    else
      usage("unknown argument '" + s + "'");
  }
  // Small default set on the CPU (MPI over shared memory, 2 cores here).
  if (sizes.empty())
    sizes = a.gpu ? "1M,4M,16M,64M,256M" : "1M,4M,16M,64M";
  for (size_t p = 0; p <= sizes.size();) {
    size_t q = sizes.find(',', p);
    if (q == std::string::npos)
      q = sizes.size();
    a.sizes.push_back(parseSize(sizes.substr(p, q - p)));
    p = q + 1;
  }
  return a;
}

// Buffer fill/readback and per-call timing for the backend's memory.
class Device {
public:
  explicit Device(Communicator &c) : comm_(c) {}
  virtual ~Device() = default;
  virtual void fill(float *p, size_t n, float v) { std::fill(p, p + n, v); }
  virtual bool allEqual(const float *p, size_t n, float v) {
    return std::all_of(p, p + n, [v](float x) { return x == v; });
  }
  // Milliseconds the blocking call f takes on this rank.
  template <class F> double timeMs(F f) {
    begin();
    f();
    return end();
  }

protected:
  virtual void begin() { t0_ = std::chrono::steady_clock::now(); }
  virtual double end() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_)
        .count();
  }
  Communicator &comm_;
  std::chrono::steady_clock::time_point t0_;
};

#ifdef AMPC_BENCH_NCCL
class CudaDevice final : public Device {
public:
  explicit CudaDevice(NcclCommunicator &c)
      : Device(c), stream_(static_cast<cudaStream_t>(c.stream())) {
    check(cudaEventCreate(&a_), "cudaEventCreate");
    check(cudaEventCreate(&b_), "cudaEventCreate");
  }
  ~CudaDevice() override {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  void fill(float *p, size_t n, float v) override {
    std::vector<float> h(n, v);
    check(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  bool allEqual(const float *p, size_t n, float v) override {
    std::vector<float> h(n);
    check(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return Device::allEqual(h.data(), n, v);
  }

private:
  // The collectives (and the bucketer's packing copies) run on the
  // communication stream, so events there bracket exactly that work.
  void begin() override { check(cudaEventRecord(a_, stream_), "cudaEventRecord"); }
  double end() override {
    check(cudaEventRecord(b_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(b_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a_, b_), "cudaEventElapsedTime");
    return ms;
  }
  void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess)
      comm_.abort(std::string(what) + ": " + cudaGetErrorString(e));
  }
  cudaStream_t stream_;
  cudaEvent_t a_, b_;
};
#endif

// Median over iterations of the slowest rank's time.
template <class F>
double medianMs(Communicator &comm, Device &dev, const Args &a, F f) {
  for (int i = 0; i < a.warmup; ++i)
    f();
  std::vector<double> t(a.iters);
  for (int i = 0; i < a.iters; ++i) {
    comm.barrier();
    t[i] = dev.timeMs(f);
  }
  comm.hostAllreduce(t.data(), t.size(), CommType::F64, ReduceOp::Max);
  std::sort(t.begin(), t.end());
  return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
}

std::string human(size_t bytes) {
  char b[32];
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    std::snprintf(b, sizeof b, "%zu MiB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(b, sizeof b, "%zu KiB", bytes >> 10);
  else
    std::snprintf(b, sizeof b, "%zu B", bytes);
  return b;
}

} // namespace

int main(int argc, char **argv) {
  Args a = parseArgs(argc, argv);
  CommOptions co = commOptionsFromEnv();
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Device> dev;
  if (a.gpu) {
#ifdef AMPC_BENCH_NCCL
    if (cudaDeviceCountOrZero() == 0)
      usage("--gpu: no CUDA device visible");
    co.gpu = true;
    // Constructed directly: NCCL works at world size 1 without mpirun, and
    // the reference links NcclCommunicator out of its archive.
    auto nccl = std::make_unique<NcclCommunicator>(co);
    dev = std::make_unique<CudaDevice>(*nccl);
    comm = std::move(nccl);
#else
    usage("--gpu: built without the NCCL backend (AMPC_WITH_NCCL=OFF)");
#endif
  } else {
    comm = createCommunicator(Backend::Mpi, co);
    dev = std::make_unique<Device>(*comm);
  }
  const int n = comm->size();
  const bool root = comm->rank() == 0;
  if (root) {
    std::printf("# ampc-allreduce-bench: %s backend, %s buffers, world size %d, FP32 sum\n",
                backendName(comm->backend()), a.gpu ? "device" : "host", n);
    std::printf("# median of %d iterations after %d warm-up (slowest rank per iteration; %s)\n",
                a.iters, a.warmup, a.gpu ? "CUDA events" : "host std::chrono");
    std::printf("# bucketed: GradBucketer, %zu MiB buckets, %zu tensor(s); raw: one allreduceSum\n",
                a.bucketMb, a.tensors);
    std::printf("# algbw = bytes/time; busbw = algbw*2(n-1)/n (nccl-tests)%s\n",
                n == 1 ? "; n = 1: busbw is 0 by definition, not shown" : "");
    std::printf("%10s  %-9s %7s %11s %12s %12s\n", "size", "variant", "buckets", "time_us",
                "algbw_GB/s", "busbw_GB/s");
  }
  const float expect = float(n) * float(n + 1) / 2;
  for (size_t bytes : a.sizes) {
    size_t count = bytes / sizeof(float);
    if (count < a.tensors)
      usage("size " + human(bytes) + " has fewer elements than --tensors");
    // K separately allocated gradient buffers, the last one takes the rest.
    std::vector<GradBuffer> grads;
    for (size_t k = 0; k < a.tensors; ++k) {
      size_t c = k + 1 < a.tensors ? count / a.tensors : count - (count / a.tensors) * k;
      grads.push_back({static_cast<float *>(comm->allocate(c * sizeof(float))), c});
    }
    BucketOptions bo;
    bo.bucketBytes = a.bucketMb << 20;
    bo.average = false; // what trainMain does: Model::step divides
    GradBucketer bucketer(*comm, grads, bo);
    float *raw = static_cast<float *>(comm->allocate(bytes));

    // Correctness once per size, then zeros (sums stay 0: no overflow, no
    // denormals) for timing.
    for (auto &g : grads)
      dev->fill(g.data, g.count, float(comm->rank() + 1));
    dev->fill(raw, count, float(comm->rank() + 1));
    bucketer.allreduce();
    comm->allreduceSum(raw, count);
    int ok = dev->allEqual(raw, count, expect);
    for (auto &g : grads)
      ok &= dev->allEqual(g.data, g.count, expect);
    comm->hostAllreduce(&ok, 1, CommType::I32, ReduceOp::Min); // host memory on every backend
    if (!ok)
      comm->abort("all-reduce of " + human(bytes) + " gave a wrong sum");
    for (auto &g : grads)
      dev->fill(g.data, g.count, 0.0f);
    dev->fill(raw, count, 0.0f);

    struct Row {
      const char *name;
      size_t buckets;
      double ms;
    } rows[] = {
        {"bucketed", bucketer.numBuckets(),
         medianMs(*comm, *dev, a, [&] { bucketer.allreduce(); })},
        {"raw", 1, medianMs(*comm, *dev, a, [&] { comm->allreduceSum(raw, count); })},
    };
    for (const Row &r : rows) {
      if (!root)
        continue;
      double algbw = double(bytes) / (r.ms * 1e-3) / 1e9;
      if (n > 1)
        std::printf("%10s  %-9s %7zu %11.1f %12.2f %12.2f\n", human(bytes).c_str(), r.name,
                    r.buckets, r.ms * 1e3, algbw, algbw * 2.0 * (n - 1) / n);
      else
        std::printf("%10s  %-9s %7zu %11.1f %12.2f %12s\n", human(bytes).c_str(), r.name,
                    r.buckets, r.ms * 1e3, algbw, "-");
    }
    std::fflush(stdout);
    comm->deallocate(raw);
    for (auto &g : grads)
      comm->deallocate(g.data);
  }
  return 0;
}
