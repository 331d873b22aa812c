//===- Communicator.cpp - Backend choice, options, shared internals -------===//

#include "runtime/comm/Communicator.h"
#include "runtime/comm/Detail.h"
#include "runtime/comm/LocalCommunicator.h"
#include "runtime/comm/MpiCommunicator.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace ampc::rt {

size_t commTypeSize(CommType t) {
  switch (t) {
  case CommType::F32: return 4;
  case CommType::F64: return 8;
  case CommType::I32: return 4;
  case CommType::I64: return 8;
  case CommType::F16: return 2;
  case CommType::BF16: return 2;
  }
  return 0;
}

const char *backendName(Backend b) {
  switch (b) {
  case Backend::Auto: return "auto";
  case Backend::Local: return "local";
  case Backend::Mpi: return "mpi";
  case Backend::Nccl: return "nccl";
  }
  return "?";
}

bool launchedByMpi() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v))
      return true;
  return false;
}

CommOptions commOptionsFromEnv(CommOptions base) {
  if (const char *t = std::getenv("AMPC_COMM_TIMEOUT")) {
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(t, &end);
    if (end == t || *end != '\0' || errno || !(v > 0))
      comm::fatal(std::string("AMPC_COMM_TIMEOUT='") + t +
                  "' is not a positive number of seconds");
    base.timeoutSeconds = v;
  }
  return base;
}

// Defined by ampc_comm_nccl; weak so CPU binaries need no CUDA libraries.
std::unique_ptr<Communicator> createNcclCommunicator(const CommOptions &options)
    __attribute__((weak));

bool ncclCompiledIn() { return createNcclCommunicator != nullptr; }

std::unique_ptr<Communicator> createCommunicator(Backend backend, CommOptions options) {
  if (backend == Backend::Auto) {
    if (!launchedByMpi())
      backend = Backend::Local;
    else if (options.gpu)
      backend = Backend::Nccl; // GPU buffers: MPI here is not CUDA-aware
    else
      backend = Backend::Mpi;
  }
  switch (backend) {
  case Backend::Local:
    return std::make_unique<LocalCommunicator>(options);
  case Backend::Mpi:
    return std::make_unique<MpiCommunicator>(options);
  case Backend::Nccl:
    if (!ncclCompiledIn())
      comm::fatal("the NCCL backend is not linked in (build with AMPC_WITH_NCCL and link "
                  "ampc_comm_nccl whole-archive)");
    return createNcclCommunicator(options);
  case Backend::Auto:
    break;
  }
  comm::fatal("unknown communicator backend");
}

namespace comm {

void fatal(const std::string &message, int code) {
  std::fprintf(stderr, "ampc: error: %s\n", message.c_str());
  std::fflush(stderr);
  if (code == 2)
    std::exit(code);
  std::_Exit(code);
}

std::string rankMessage(int rank, int size, const std::string &message) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size) + ": " + message;
}

namespace {
std::atomic<int> gRank{0}, gSize{1};
std::atomic<const char *> gOp{nullptr};

// Async-signal-safe: only write(2) and integer formatting.
void appendStr(char *buf, size_t &n, size_t cap, const char *s) {
  while (*s && n + 1 < cap)
    buf[n++] = *s++;
}
void appendInt(char *buf, size_t &n, size_t cap, long v) {
  char tmp[24];
  int k = 0;
  if (v < 0) {
    appendStr(buf, n, cap, "-");
    v = -v;
  }
  do {
    tmp[k++] = char('0' + v % 10);
    v /= 10;
  } while (v && k < 23);
  while (k && n + 1 < cap)
    buf[n++] = tmp[--k];
}

extern "C" void onTerminate(int sig) {
  char buf[256];
  size_t n = 0, cap = sizeof(buf);
  appendStr(buf, n, cap, "ampc: error: rank ");
  appendInt(buf, n, cap, gRank.load());
  appendStr(buf, n, cap, " of ");
  appendInt(buf, n, cap, gSize.load());
  appendStr(buf, n, cap, ": terminated by signal ");
  appendInt(buf, n, cap, sig);
  const char *op = gOp.load();
  appendStr(buf, n, cap, op ? " during " : " outside a collective");
  if (op)
    appendStr(buf, n, cap, op);
  appendStr(buf, n, cap, " (the launcher ends the job when another rank fails)\n");
  ssize_t ignored = write(STDERR_FILENO, buf, n);
  (void)ignored;
  _exit(128 + sig);
}
} // namespace

void setIdentity(int rank, int size) {
  gRank = rank;
  gSize = size;
}
void setCurrentOp(const char *op) { gOp = op; }
const char *currentOp() { return gOp.load(); }

void installTerminationReport() {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction sa {};
    sa.sa_handler = onTerminate;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

void backoff(unsigned iter) {
  if (iter < 256)
    return; // spin: most collectives finish in microseconds
  if (iter < 1024) {
    std::this_thread::yield();
    return;
  }
  unsigned us = iter < 4096 ? 20 : 1000;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

} // namespace comm
} // namespace ampc::rt
