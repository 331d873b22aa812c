//===- NcclCommunicator.cpp - NCCL collectives for the CUDA target --------===//
//
// Compiled with the CUDA runtime headers by the host compiler (no nvcc).
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/NcclCommunicator.h"
#include "runtime/comm/Detail.h"
#include "runtime/comm/MpiCommunicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#include <map>
#include <vector>

namespace ampc::rt {

// The strong definition of the factory hook Communicator.cpp declares weak.
std::unique_ptr<Communicator> createNcclCommunicator(const CommOptions &options) {
  return std::make_unique<NcclCommunicator>(options);
}

int cudaDeviceCountOrZero() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError(); // clear the sticky "no device" error
    return 0;
  }
  return n;
}

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;   // the communication stream
  cudaStream_t producer = nullptr; // legacy default stream unless set
  cudaEvent_t ready = nullptr;     // producer -> comm stream ordering
  std::vector<cudaEvent_t> after;  // orderAfter(): instead of |ready|
  std::map<Handle, cudaEvent_t> pending;
  std::vector<cudaEvent_t> freeEvents;
  Handle next = 1;
};

void NcclCommunicator::checkCuda(int err, const char *what) {
  if (err == cudaSuccess)
    return;
  abort(std::string(what) + ": CUDA error: " + cudaGetErrorString(cudaError_t(err)));
}

void NcclCommunicator::checkNccl(int res, const char *what) {
  if (res == ncclSuccess || res == ncclInProgress)
    return;
  abort(std::string(what) + ": NCCL error: " + ncclGetErrorString(ncclResult_t(res)) +
        " (a peer rank probably failed)");
}

void NcclCommunicator::settle(const char *what) {
  ncclResult_t state = ncclSuccess;
  bool ok = comm::pollUntil(timeout_, [&] {
    ncclCommGetAsyncError(s_->comm, &state);
    return state != ncclInProgress;
  });
  if (!ok) {
    char secs[32];
    std::snprintf(secs, sizeof(secs), "%g", timeout_);
    abort(std::string(what) + " timed out after " + secs +
          " s: a peer rank died or stalled (AMPC_COMM_TIMEOUT sets the limit)");
  }
  checkNccl(state, what);
}

NcclCommunicator::NcclCommunicator(const CommOptions &options)
    : Communicator(options.timeoutSeconds), s_(std::make_unique<State>()) {
  if (launchedByMpi()) {
    bootstrap_ = std::make_unique<MpiCommunicator>(options);
    rank_ = bootstrap_->rank();
    size_ = bootstrap_->size();
    localRank_ = bootstrap_->localRank();
  } else {
    comm::setIdentity(0, 1);
    if (options.reportTermination)
      comm::installTerminationReport();
  }

  int devices = cudaDeviceCountOrZero();
  if (devices == 0)
    abort("the NCCL backend needs a CUDA device and none is visible");
  // One GPU per rank: by local rank, or the only visible one when the
  // launcher restricts each rank with CUDA_VISIBLE_DEVICES.
  if (devices == 1)
    device_ = 0;
  else if (localRank_ < devices)
    device_ = localRank_;
  else
    abort("local rank " + std::to_string(localRank_) + " has no GPU (" +
          std::to_string(devices) + " visible); start at most one rank per GPU");
  checkCuda(cudaSetDevice(device_), "cudaSetDevice");
  checkCuda(cudaStreamCreateWithFlags(&s_->stream, cudaStreamNonBlocking),
            "creating the communication stream");
  checkCuda(cudaEventCreateWithFlags(&s_->ready, cudaEventDisableTiming), "cudaEventCreate");

  ncclUniqueId id{};
  if (rank_ == 0)
    checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  if (bootstrap_)
    bootstrap_->broadcast(&id, sizeof(id), 0);

  // Non-blocking so that init and collectives can be bounded by a deadline.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  comm::setCurrentOp("NCCL init");
  checkNccl(ncclCommInitRankConfig(&s_->comm, size_, id, rank_, &config), "NCCL init");
  settle("NCCL init");
  comm::setCurrentOp(nullptr);
}

NcclCommunicator::~NcclCommunicator() {
  for (auto &[h, ev] : s_->pending)
    s_->freeEvents.push_back(ev);
  if (s_->comm) {
    cudaStreamSynchronize(s_->stream);
    ncclCommFinalize(s_->comm);
    ncclResult_t state = ncclInProgress;
    comm::pollUntil(timeout_, [&] {
      ncclCommGetAsyncError(s_->comm, &state);
      return state != ncclInProgress;
    });
    ncclCommDestroy(s_->comm);
  }
  for (cudaEvent_t ev : s_->freeEvents)
    cudaEventDestroy(ev);
  if (s_->ready)
    cudaEventDestroy(s_->ready);
  if (s_->stream)
    cudaStreamDestroy(s_->stream);
}

void *NcclCommunicator::stream() const { return s_->stream; }

void NcclCommunicator::setProducerStream(void *stream) {
  s_->producer = static_cast<cudaStream_t>(stream);
}

void NcclCommunicator::orderAfter(void *event) {
  if (!event)
    s_->after.clear();
  else
    s_->after.push_back(static_cast<cudaEvent_t>(event));
}

// The communication stream waits for the producer: for the events given to
// orderAfter() when there are some, else for all the work queued on it now.
void NcclCommunicator::waitForProducer() {
  if (!s_->after.empty()) {
    for (cudaEvent_t e : s_->after)
      checkCuda(cudaStreamWaitEvent(s_->stream, e, 0), "ordering after a ready event");
    return;
  }
  checkCuda(cudaEventRecord(s_->ready, s_->producer), "ordering after the producer stream");
  checkCuda(cudaStreamWaitEvent(s_->stream, s_->ready, 0), "ordering after the producer stream");
}

Communicator::Handle NcclCommunicator::startAllreduce(void *buf, size_t count, CommType type,
                                                      ReduceOp op) {
  ncclDataType_t dt = ncclFloat32;
  switch (type) {
  case CommType::F32: dt = ncclFloat32; break;
  case CommType::F64: dt = ncclFloat64; break;
  case CommType::I32: dt = ncclInt32; break;
  case CommType::I64: dt = ncclInt64; break;
  case CommType::F16: dt = ncclFloat16; break;
  case CommType::BF16: dt = ncclBfloat16; break;
  }
  ncclRedOp_t nop = op == ReduceOp::Sum ? ncclSum : op == ReduceOp::Max ? ncclMax : ncclMin;
  // The buffer is written by work queued on the producer stream.
  waitForProducer();
  s_->after.clear();
  checkNccl(ncclAllReduce(buf, buf, count, dt, nop, s_->comm, s_->stream), "ncclAllReduce");
  settle("allreduce");

  cudaEvent_t done;
  if (!s_->freeEvents.empty()) {
    done = s_->freeEvents.back();
    s_->freeEvents.pop_back();
  } else {
    checkCuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
  }
  checkCuda(cudaEventRecord(done, s_->stream), "cudaEventRecord");
  Handle h = s_->next++;
  s_->pending[h] = done;
  return h;
}

void NcclCommunicator::wait(Handle h) {
  auto it = s_->pending.find(h);
  if (it == s_->pending.end())
    abort("wait on an unknown or finished collective");
  cudaEvent_t ev = it->second;
  comm::setCurrentOp("allreduce");
  cudaError_t cerr = cudaSuccess;
  ncclResult_t nerr = ncclSuccess;
  bool ok = comm::pollUntil(timeout_, [&] {
    cerr = cudaEventQuery(ev);
    ncclCommGetAsyncError(s_->comm, &nerr);
    return cerr != cudaErrorNotReady || (nerr != ncclSuccess && nerr != ncclInProgress);
  });
  checkNccl(nerr, "allreduce");
  if (cerr != cudaErrorNotReady)
    checkCuda(cerr, "allreduce");
  if (!ok) {
    char secs[32];
    std::snprintf(secs, sizeof(secs), "%g", timeout_);
    abort(std::string("allreduce timed out after ") + secs +
          " s: a peer rank died or stalled (AMPC_COMM_TIMEOUT sets the limit)");
  }
  comm::setCurrentOp(nullptr);
  s_->freeEvents.push_back(ev);
  s_->pending.erase(it);
}

void NcclCommunicator::flush() {
  checkCuda(cudaEventRecord(s_->ready, s_->stream), "cudaEventRecord");
  cudaError_t err = cudaSuccess;
  bool ok = comm::pollUntil(timeout_, [&] {
    err = cudaEventQuery(s_->ready);
    return err != cudaErrorNotReady;
  });
  checkCuda(err, "communication stream");
  if (!ok)
    abort("communication stream did not drain within the timeout");
}

void NcclCommunicator::broadcast(void *buf, size_t bytes, int root) {
  if (bootstrap_)
    bootstrap_->broadcast(buf, bytes, root);
  else if (root != 0)
    abort("broadcast from root " + std::to_string(root) + " in a world of size 1");
}

void NcclCommunicator::hostAllreduce(void *buf, size_t count, CommType type, ReduceOp op) {
  if (bootstrap_)
    bootstrap_->hostAllreduce(buf, count, type, op);
}

void NcclCommunicator::barrier() {
  if (bootstrap_)
    bootstrap_->barrier();
}

void NcclCommunicator::abort(const std::string &message) {
  // Frees the peers blocked in NCCL kernels before the job goes down.
  if (s_ && s_->comm)
    ncclCommAbort(s_->comm);
  if (s_)
    s_->comm = nullptr;
  if (bootstrap_)
    bootstrap_->abort(message);
  comm::fatal(comm::rankMessage(rank_, size_, message), 1);
}

void *NcclCommunicator::allocate(size_t bytes) {
  void *p = nullptr;
  checkCuda(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc for the gradient buckets");
  return p;
}

void NcclCommunicator::deallocate(void *p) {
  cudaStreamSynchronize(s_->stream);
  cudaFree(p);
}

void NcclCommunicator::copy(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return;
  // Packing a bucket reads gradients the producer stream writes.
  waitForProducer();
  checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s_->stream),
              "cudaMemcpyAsync on the communication stream");
}

} // namespace ampc::rt
