//===- Detail.h - Internals shared by the communicator backends -*- C++ -*-===//
#ifndef AMPC_RUNTIME_COMM_DETAIL_H
#define AMPC_RUNTIME_COMM_DETAIL_H

#include <chrono>
#include <string>

namespace ampc::rt::comm {

// Prints "ampc: error: MESSAGE" and exits with |code| (no MPI involved).
// Configuration errors (code 2) run exit handlers; aborts (code 1) use
// _Exit so a wedged CUDA context or MPI cannot hang the way out.
[[noreturn]] void fatal(const std::string &message, int code = 2);

// "rank R of W: MESSAGE", the prefix every collective error carries.
std::string rankMessage(int rank, int size, const std::string &message);

// What the termination-signal report names: the collective in flight (or
// "compute" outside one) on rank/size. Cheap: plain stores.
void setIdentity(int rank, int size);
void setCurrentOp(const char *op); // a string literal, or nullptr
const char *currentOp();
// Installs SIGTERM/SIGINT/SIGHUP reporters where the handlers are default.
void installTerminationReport();

void backoff(unsigned iter);

// Polls |done| until it returns true or |timeoutSeconds| pass; returns false
// on timeout. Spins briefly, then yields, then sleeps (up to 1 ms) so an
// oversubscribed node still makes progress.
template <typename Done> bool pollUntil(double timeoutSeconds, Done done) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::duration<double>(timeoutSeconds);
  for (unsigned iter = 0;; ++iter) {
    if (done())
      return true;
    if ((iter & 63) == 0 && clock::now() > deadline)
      return false;
    backoff(iter);
  }
}

} // namespace ampc::rt::comm

#endif
