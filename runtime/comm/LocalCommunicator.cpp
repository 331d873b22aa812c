//===- LocalCommunicator.cpp - World size 1, no MPI -----------------------===//

#include "runtime/comm/LocalCommunicator.h"
#include "runtime/comm/Detail.h"

#include <cstdlib>
#include <cstring>

namespace ampc::rt {

LocalCommunicator::LocalCommunicator(const CommOptions &options)
    : Communicator(options.timeoutSeconds) {}

void LocalCommunicator::broadcast(void *, size_t, int root) {
  if (root != 0)
    abort("broadcast from root " + std::to_string(root) + " in a world of size 1");
}

void LocalCommunicator::abort(const std::string &message) {
  comm::fatal(comm::rankMessage(0, 1, message), 1);
}

void *LocalCommunicator::allocate(size_t bytes) {
  void *p = std::malloc(bytes ? bytes : 1);
  if (!p)
    abort("out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}
void LocalCommunicator::deallocate(void *p) { std::free(p); }
void LocalCommunicator::copy(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memmove(dst, src, bytes);
}

} // namespace ampc::rt
