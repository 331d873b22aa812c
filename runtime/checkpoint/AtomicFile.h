//===- AtomicFile.h - Crash-safe file writes ---------------------*- C++ -*-===//
#ifndef AMPC_RUNTIME_CHECKPOINT_ATOMICFILE_H
#define AMPC_RUNTIME_CHECKPOINT_ATOMICFILE_H

#include <string>
#include <string_view>

namespace ampc::rt {

// Writes |bytes| to |path| so that readers see the old file or the whole new
// one: write "PATH.tmp", fsync it, rename over PATH, fsync the directory.
// Throws InputError naming the path on failure.
void writeFileAtomic(const std::string &path, std::string_view bytes);

// Writes |bytes| to |path| and fsyncs it (for files inside a directory that
// is itself renamed into place).
void writeFileSynced(const std::string &path, std::string_view bytes);

// fsyncs a directory so a rename inside it is durable.
void syncDirectory(const std::string &dir);

} // namespace ampc::rt

#endif
