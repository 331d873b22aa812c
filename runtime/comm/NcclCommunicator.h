//===- NcclCommunicator.h - NCCL collectives for the CUDA target -*- C++ -*-===//
//
// One GPU per rank, chosen by local rank. Rank 0 creates the ncclUniqueId and
// broadcasts it over MPI (no MPI at world size 1). The communicator is
// created non-blocking so init and every collective can be waited for with a
// deadline: the wait polls the completion event and ncclCommGetAsyncError
// and calls ncclCommAbort on timeout or error. Collectives run on a dedicated
// communication stream, ordered after the producer stream's queued work.
// Host-side control (broadcast, barrier) goes over the MPI bootstrap.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_NCCLCOMMUNICATOR_H
#define AMPC_RUNTIME_COMM_NCCLCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"

#include <memory>

namespace ampc::rt {

class MpiCommunicator;

class NcclCommunicator final : public Communicator {
public:
  explicit NcclCommunicator(const CommOptions &options);
  ~NcclCommunicator() override;

  Backend backend() const override { return Backend::Nccl; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  Memory memory() const override { return Memory::Device; }
  int device() const { return device_; }
  // The cudaStream_t collectives and copies run on.
  void *stream() const;

  Handle startAllreduce(void *buf, size_t count, CommType type, ReduceOp op) override;
  void wait(Handle h) override;
  void broadcast(void *buf, size_t bytes, int root) override;
  void barrier() override;
  void hostAllreduce(void *buf, size_t count, CommType type, ReduceOp op) override;
  [[noreturn]] void abort(const std::string &message) override;

  void *allocate(size_t bytes) override;
  void deallocate(void *p) override;
  void copy(void *dst, const void *src, size_t bytes) override;
  void setProducerStream(void *stream) override;
  void orderAfter(void *event) override;
  void flush() override;

private:
  struct State; // CUDA/NCCL handles, kept out of this header
  void checkCuda(int err, const char *what);
  void checkNccl(int res, const char *what);
  // Waits until the non-blocking communicator has no call in progress.
  void settle(const char *what);
  // Orders the communication stream after the producer (orderAfter).
  void waitForProducer();

  std::unique_ptr<MpiCommunicator> bootstrap_; // null at world size 1
  std::unique_ptr<State> s_;
  int rank_ = 0, size_ = 1, localRank_ = 0, device_ = 0;
};

// Number of visible CUDA devices (0 when there is no driver or device).
int cudaDeviceCountOrZero();

} // namespace ampc::rt

#endif
