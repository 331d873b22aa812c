//===- LocalCommunicator.h - World size 1, no MPI ----------------*- C++ -*-===//
//
// A single process not started by mpirun: every collective is the identity,
// so the training loop has one code path for any world size.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_LOCALCOMMUNICATOR_H
#define AMPC_RUNTIME_COMM_LOCALCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"

namespace ampc::rt {

class LocalCommunicator final : public Communicator {
public:
  explicit LocalCommunicator(const CommOptions &options);

  Backend backend() const override { return Backend::Local; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int localRank() const override { return 0; }
  Memory memory() const override { return Memory::Host; }

  Handle startAllreduce(void *, size_t, CommType, ReduceOp) override { return 0; }
  void wait(Handle) override {}
  void broadcast(void *, size_t, int root) override;
  void barrier() override {}
  void hostAllreduce(void *, size_t, CommType, ReduceOp) override {}
  [[noreturn]] void abort(const std::string &message) override;

  void *allocate(size_t bytes) override;
  void deallocate(void *p) override;
  void copy(void *dst, const void *src, size_t bytes) override;
};

} // namespace ampc::rt

#endif
