//===- MpiCommunicator.h - MPI collectives with deadlines -------*- C++ -*-===//
//
// The CPU target's transport and the NCCL backend's bootstrap. Collectives
// are non-blocking (MPI_Iallreduce/Ibcast/Ibarrier) and waited for by
// polling MPI_Test against a deadline, so a dead or stalled peer ends the job
// with a message naming the operation, the rank and the timeout. Half
// precision sums use user-defined MPI ops (each addition rounded once to the
// half type, like NCCL).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_MPICOMMUNICATOR_H
#define AMPC_RUNTIME_COMM_MPICOMMUNICATOR_H

#include "runtime/comm/Communicator.h"

#include <memory>

namespace ampc::rt {

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(const CommOptions &options);
  ~MpiCommunicator() override;

  Backend backend() const override { return Backend::Mpi; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  Memory memory() const override { return Memory::Host; }

  Handle startAllreduce(void *buf, size_t count, CommType type, ReduceOp op) override;
  void wait(Handle h) override;
  void broadcast(void *buf, size_t bytes, int root) override;
  void barrier() override;
  void hostAllreduce(void *buf, size_t count, CommType type, ReduceOp op) override {
    run(buf, count, type, op);
  }
  [[noreturn]] void abort(const std::string &message) override;

  void *allocate(size_t bytes) override;
  void deallocate(void *p) override;
  void copy(void *dst, const void *src, size_t bytes) override;

private:
  struct State; // MPI handles and requests in flight, kept out of this header
  void check(int err, const char *what);

  std::unique_ptr<State> s_;
  int rank_ = 0, size_ = 1, localRank_ = 0;
};

// This node's local rank from the launcher's environment (0 if unknown).
int localRankFromEnv();

} // namespace ampc::rt

#endif
