//===- FaultProgram.cpp - A rank that dies, stalls or disagrees -----------===//
//
// `ampc-comm-fault MODE`, run under mpirun by fault_test.py, which checks
// that rank 0 ends the job non-zero with a one-line message in time.
//   ok        every rank all-reduces; exit 0 (the control case)
//   exit      rank 1 calls _exit(3) before the collective
//   sigkill   rank 1 kills itself with SIGKILL before the collective
//   stall     rank 1 sleeps past AMPC_COMM_TIMEOUT before the collective
//   disagree  rank 1 reports a different skip decision to checkAgreement
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/AmpSync.h"
#include "runtime/comm/Communicator.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unistd.h>

using namespace ampc::rt;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ampc-comm-fault ok|exit|sigkill|stall|disagree\n");
    return 2;
  }
  std::string mode = argv[1];
  auto comm = createCommunicator(Backend::Auto, commOptionsFromEnv());
  comm->barrier(); // everyone is up
  if (comm->rank() == 1) {
    if (mode == "exit")
      _exit(3);
    if (mode == "sigkill")
      raise(SIGKILL);
    if (mode == "stall")
      std::this_thread::sleep_for(std::chrono::duration<double>(comm->timeoutSeconds() * 6));
  }
  if (mode == "disagree") {
    StepStats s;
    s.skipped = comm->rank() == 1;
    checkAgreement(*comm, s);
  }
  float x = 1.0f;
  comm->allreduceSum(&x, 1);
  if (x != float(comm->size())) {
    std::fprintf(stderr, "wrong sum %g\n", double(x));
    return 1;
  }
  std::printf("rank %d: ok\n", comm->rank());
  return 0;
}
