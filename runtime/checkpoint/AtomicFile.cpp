//===- AtomicFile.cpp - Crash-safe file writes ---------------------------===//
#include "runtime/checkpoint/AtomicFile.h"
#include "runtime/data/DataError.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace ampc::rt {

void writeFileSynced(const std::string &path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    fail(path, std::string("cannot create: ") + std::strerror(errno));
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      fail(path, std::string("write failed: ") + std::strerror(err));
    }
    p += n;
    left -= size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    fail(path, std::string("fsync/close failed: ") + std::strerror(errno));
}

void syncDirectory(const std::string &dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return; // best effort: some filesystems refuse
  ::fsync(fd);
  ::close(fd);
}

void writeFileAtomic(const std::string &path, std::string_view bytes) {
  // The rename would replace whatever is there: a device node (as root,
  // --dump-step /dev/full) or a FIFO is refused instead. A symbolic link
  // is replaced, not what it points to.
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::symlink_status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
      !std::filesystem::is_symlink(st))
    fail(path, "exists and is not a regular file; not replacing it");
  std::string tmp = path + ".tmp";
  writeFileSynced(tmp, bytes);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fail(path, std::string("rename failed: ") + std::strerror(errno));
  syncDirectory(std::filesystem::path(path).parent_path().string());
}

} // namespace ampc::rt
