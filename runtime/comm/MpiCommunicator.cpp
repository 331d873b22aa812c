//===- MpiCommunicator.cpp - MPI collectives with deadlines ---------------===//

#include "runtime/comm/MpiCommunicator.h"
#include "runtime/comm/Detail.h"
#include "runtime/numerics/Half.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace ampc::rt {

namespace {

// MPI is initialized once per process and finalized at exit, so tests can
// create and destroy communicators freely (MPI cannot be re-initialized).
void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

void ensureMpiInitialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    comm::fatal("MPI_Init_thread failed");
  std::atexit(finalizeAtExit);
}

// Sums of binary16 / bfloat16: each addition is exact in double (both
// formats have few significand bits), then rounded once to the half type.
extern "C" void sumF16(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<const num::half *>(in);
  auto *b = static_cast<num::half *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = num::roundToHalf(double(a[i]) + double(b[i]));
}
extern "C" void sumBF16(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<const num::bf16 *>(in);
  auto *b = static_cast<num::bf16 *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = num::roundToBF16(double(float(a[i])) + double(float(b[i])));
}

const char *opName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return "allreduce(sum)";
  case ReduceOp::Max: return "allreduce(max)";
  case ReduceOp::Min: return "allreduce(min)";
  }
  return "allreduce";
}

} // namespace

struct MpiCommunicator::State {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype f16 = MPI_DATATYPE_NULL, bf16 = MPI_DATATYPE_NULL;
  MPI_Op sumF16 = MPI_OP_NULL, sumBF16 = MPI_OP_NULL;
  struct Pending {
    const char *what;
    std::vector<MPI_Request> requests;
  };
  std::map<Handle, Pending> pending;
  Handle next = 1;
};

int localRankFromEnv() {
  for (const char *v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                        "SLURM_LOCALID"})
    if (const char *s = std::getenv(v))
      return std::atoi(s);
  return 0;
}

MpiCommunicator::MpiCommunicator(const CommOptions &options)
    : Communicator(options.timeoutSeconds), s_(std::make_unique<State>()) {
  ensureMpiInitialized();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  localRank_ = localRankFromEnv();
  comm::setIdentity(rank_, size_);
  if (options.reportTermination)
    comm::installTerminationReport();

  // A private communicator whose errors come back as codes, so a transport
  // failure becomes our one-line message instead of MPI's default abort.
  MPI_Request req;
  check(MPI_Comm_idup(MPI_COMM_WORLD, &s_->comm, &req), "communicator setup");
  s_->pending[0] = {"communicator setup", {req}};
  wait(0);
  MPI_Comm_set_errhandler(s_->comm, MPI_ERRORS_RETURN);

  MPI_Type_contiguous(2, MPI_BYTE, &s_->f16);
  MPI_Type_commit(&s_->f16);
  MPI_Type_contiguous(2, MPI_BYTE, &s_->bf16);
  MPI_Type_commit(&s_->bf16);
  MPI_Op_create(sumF16, /*commute=*/1, &s_->sumF16);
  MPI_Op_create(sumBF16, /*commute=*/1, &s_->sumBF16);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  MPI_Op_free(&s_->sumF16);
  MPI_Op_free(&s_->sumBF16);
  MPI_Type_free(&s_->f16);
  MPI_Type_free(&s_->bf16);
  if (s_->comm != MPI_COMM_NULL)
    MPI_Comm_free(&s_->comm);
}

void MpiCommunicator::check(int err, const char *what) {
  if (err == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, text, &len);
  abort(std::string(what) + " failed: " + std::string(text, size_t(len)) +
        " (a peer rank probably failed)");
}

Communicator::Handle MpiCommunicator::startAllreduce(void *buf, size_t count, CommType type,
                                                     ReduceOp op) {
  MPI_Datatype dt;
  switch (type) {
  case CommType::F32: dt = MPI_FLOAT; break;
  case CommType::F64: dt = MPI_DOUBLE; break;
  case CommType::I32: dt = MPI_INT32_T; break;
  case CommType::I64: dt = MPI_INT64_T; break;
  case CommType::F16: dt = s_->f16; break;
  case CommType::BF16: dt = s_->bf16; break;
  }
  MPI_Op mop = op == ReduceOp::Sum ? MPI_SUM : op == ReduceOp::Max ? MPI_MAX : MPI_MIN;
  if (type == CommType::F16 || type == CommType::BF16) {
    if (op != ReduceOp::Sum)
      abort("only sums are supported on half-precision buffers");
    mop = type == CommType::F16 ? s_->sumF16 : s_->sumBF16;
  }
  const char *what = opName(op);
  Handle h = s_->next++;
  auto &p = s_->pending[h];
  p.what = what;
  // MPI counts are int: large buffers go in chunks.
  size_t elem = commTypeSize(type);
  char *base = static_cast<char *>(buf);
  for (size_t done = 0; done < count;) {
    int n = int(std::min<size_t>(count - done, INT_MAX / 2));
    MPI_Request req;
    check(MPI_Iallreduce(MPI_IN_PLACE, base + done * elem, n, dt, mop, s_->comm, &req), what);
    p.requests.push_back(req);
    done += size_t(n);
  }
  return h;
}

void MpiCommunicator::wait(Handle h) {
  auto it = s_->pending.find(h);
  if (it == s_->pending.end())
    abort("wait on an unknown or finished collective");
  State::Pending &p = it->second;
  comm::setCurrentOp(p.what);
  for (MPI_Request &req : p.requests) {
    int err = MPI_SUCCESS;
    bool ok = comm::pollUntil(timeout_, [&] {
      int flag = 0;
      err = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      return flag || err != MPI_SUCCESS;
    });
    check(err, p.what);
    if (!ok) {
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%g", timeout_);
      abort(std::string(p.what) + " timed out after " + secs +
            " s: a peer rank died or stalled (AMPC_COMM_TIMEOUT sets the limit)");
    }
  }
  comm::setCurrentOp(nullptr);
  s_->pending.erase(it);
}

void MpiCommunicator::broadcast(void *buf, size_t bytes, int root) {
  if (root < 0 || root >= size_)
    abort("broadcast from root " + std::to_string(root) + " in a world of size " +
          std::to_string(size_));
  Handle h = s_->next++;
  auto &p = s_->pending[h];
  p.what = "broadcast";
  char *base = static_cast<char *>(buf);
  for (size_t done = 0; done < bytes;) {
    int n = int(std::min<size_t>(bytes - done, INT_MAX / 2));
    MPI_Request req;
    check(MPI_Ibcast(base + done, n, MPI_BYTE, root, s_->comm, &req), "broadcast");
    p.requests.push_back(req);
    done += size_t(n);
  }
  wait(h);
}

void MpiCommunicator::barrier() {
  Handle h = s_->next++;
  MPI_Request req;
  check(MPI_Ibarrier(s_->comm, &req), "barrier");
  s_->pending[h] = {"barrier", {req}};
  wait(h);
}

void MpiCommunicator::abort(const std::string &message) {
  std::fprintf(stderr, "ampc: error: %s\n", comm::rankMessage(rank_, size_, message).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1); // MPI_Abort does not return; be sure
}

void *MpiCommunicator::allocate(size_t bytes) {
  void *p = std::malloc(bytes ? bytes : 1);
  if (!p)
    abort("out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}
void MpiCommunicator::deallocate(void *p) { std::free(p); }
void MpiCommunicator::copy(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memmove(dst, src, bytes);
}

} // namespace ampc::rt
