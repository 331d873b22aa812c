//===- Communicator.h - Collectives for data-parallel training ---*- C++ -*-===//
//
// One process per rank, launched by `mpirun -np N BIN`. A Communicator hides
// the transport: a trivial single-process backend (world size 1, no MPI), MPI
// collectives for the CPU target and NCCL (bootstrapped over MPI) for the
// CUDA target. Buffers live where the backend computes: host memory for
// Local and MPI, device memory for NCCL (memory() says which).
//
// Every collective is started non-blocking and waited for with a deadline
// (Options::timeoutSeconds, env AMPC_COMM_TIMEOUT): a peer that died or
// stalled ends this rank with a one-line error and a non-zero exit, never a
// silent hang.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COMM_COMMUNICATOR_H
#define AMPC_RUNTIME_COMM_COMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ampc::rt {

enum class Backend {
  Auto,  // Local unless launched by mpirun; then Nccl if Options::gpu, else Mpi
  Local, // world size 1, collectives are no-ops
  Mpi,   // host buffers, MPI non-blocking collectives
  Nccl,  // device buffers, NCCL on a communication stream (world size 1 works
         // without mpirun)
};

enum class CommType : int32_t { F32, F64, I32, I64, F16, BF16 };
enum class ReduceOp : int32_t { Sum, Max, Min };
enum class Memory { Host, Device };

size_t commTypeSize(CommType t);
const char *backendName(Backend b);

struct CommOptions {
  // Longest wait for one collective (and for startup) before the job is
  // aborted. AMPC_COMM_TIMEOUT (seconds) overrides it; a later --comm-timeout
  // flag sets it directly.
  double timeoutSeconds = 300;
  // Auto picks NCCL when launched by mpirun and this is true (CUDA target).
  bool gpu = false;
  // Print a one-line error when the launcher terminates this rank with
  // SIGTERM/SIGINT/SIGHUP (mpirun does that when a peer exits abnormally),
  // naming the collective in flight. Installed only over default handlers.
  bool reportTermination = true;
};

// The options with the environment applied (AMPC_COMM_TIMEOUT). A malformed
// value is a one-line error and exit(2).
CommOptions commOptionsFromEnv(CommOptions base = {});

// True when this process was started by an MPI launcher (OpenMPI, PMI/PMIx).
bool launchedByMpi();

class Communicator {
public:
  // A started collective; finished by wait().
  using Handle = int64_t;

  virtual ~Communicator() = default;

  virtual Backend backend() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the processes on this node (picks the GPU).
  virtual int localRank() const = 0;
  virtual Memory memory() const = 0;
  double timeoutSeconds() const { return timeout_; }

  // Starts an in-place all-reduce of |count| elements of |type| at |buf|.
  // Collectives must be started in the same order on every rank. On NCCL
  // the operation is queued on the communication stream after the work
  // already queued on the producer stream (setProducerStream).
  virtual Handle startAllreduce(void *buf, size_t count, CommType type,
                                ReduceOp op) = 0;
  // Blocks until |h| completes, or aborts the job at the deadline.
  virtual void wait(Handle h) = 0;

  // Control plane, always on HOST memory whatever memory() says (seeds,
  // flags, sizes): copies |bytes| from |root| to every rank, in place.
  // Blocking, with the deadline.
  virtual void broadcast(void *buf, size_t bytes, int root) = 0;
  virtual void barrier() = 0;
  // A blocking all-reduce of HOST memory on every backend (step statistics,
  // agreement checks). On NCCL it goes over the MPI bootstrap.
  virtual void hostAllreduce(void *buf, size_t count, CommType type, ReduceOp op) = 0;

  // Ends the whole job: prints "ampc: error: rank R of W: MESSAGE" and exits
  // non-zero on every rank (MPI_Abort / ncclCommAbort).
  [[noreturn]] virtual void abort(const std::string &message) = 0;

  // Staging memory in the backend's memory() (host malloc, or cudaMalloc).
  virtual void *allocate(size_t bytes) = 0;
  virtual void deallocate(void *p) = 0;
  // Copies in the order of the collectives (on NCCL: on the comm stream).
  virtual void copy(void *dst, const void *src, size_t bytes) = 0;
  // Blocks until the queued copies are done (NCCL: the communication
  // stream), with the deadline. Host backends copy synchronously.
  virtual void flush() {}
  // NCCL only: the stream whose work (the backward) must finish before a
  // started collective reads its buffer (the training loop passes
  // Model::computeStream()). Ignored by host backends.
  virtual void setProducerStream(void *stream) { (void)stream; }
  // NCCL only: the next copies and the next started collective wait for
  // |event| (a cudaEvent_t recorded on the producer stream; several calls
  // add up) instead of for all the work queued on the producer stream when
  // they are issued. The overlapped gradient all-reduce passes the events
  // the model records right after each gradient's last kernel. Cleared by
  // startAllreduce and by orderAfter(nullptr). Ignored by host backends.
  virtual void orderAfter(void *event) { (void)event; }

  // Blocking typed helpers.
  void allreduceSum(float *buf, size_t n) { run(buf, n, CommType::F32, ReduceOp::Sum); }
  void allreduceSum(double *buf, size_t n) { run(buf, n, CommType::F64, ReduceOp::Sum); }
  void allreduceSum(int32_t *buf, size_t n) { run(buf, n, CommType::I32, ReduceOp::Sum); }
  void allreduceSum(int64_t *buf, size_t n) { run(buf, n, CommType::I64, ReduceOp::Sum); }
  void allreduceMax(int32_t *buf, size_t n) { run(buf, n, CommType::I32, ReduceOp::Max); }
  void allreduceMin(int32_t *buf, size_t n) { run(buf, n, CommType::I32, ReduceOp::Min); }
  void allreduceMax(float *buf, size_t n) { run(buf, n, CommType::F32, ReduceOp::Max); }
  void allreduceMin(float *buf, size_t n) { run(buf, n, CommType::F32, ReduceOp::Min); }

protected:
  explicit Communicator(double timeoutSeconds) : timeout_(timeoutSeconds) {}
  void run(void *buf, size_t n, CommType t, ReduceOp op) {
    wait(startAllreduce(buf, n, t, op));
  }
  double timeout_;
};

// Creates the communicator for this process. Requesting Nccl when
// ampc_comm_nccl is not linked in is a one-line error and exit(2); Mpi without a
// launcher runs as an MPI singleton (world size 1). MPI is initialized on
// first use and finalized at process exit, so communicators may be created
// and destroyed repeatedly (tests do).
std::unique_ptr<Communicator> createCommunicator(Backend backend = Backend::Auto,
                                                 CommOptions options = {});

// Whether the NCCL backend (library ampc_comm_nccl, built when
// AMPC_WITH_NCCL) is linked into this binary.
bool ncclCompiledIn();

} // namespace ampc::rt

#endif
