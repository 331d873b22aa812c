//===- FlagFile.h - --flagfile, expanded before the flags are read -*- C++ -*-//
//
// Abseil's parser reads --flagfile itself, so the flags in a file missed
// what the binary does for the command line (dashes in names, renamed
// flags, one-line errors) and its errors were Abseil's "ERROR: ..." with
// status 1. expandFlagFiles puts the files' flags in place of --flagfile
// first, so the rest of the parse sees one command line.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TRAIN_FLAGFILE_H
#define AMPC_RUNTIME_TRAIN_FLAGFILE_H

#include <functional>
#include <string>
#include <vector>

namespace ampc::rt {

// Checks one flag of a flagfile as the command line's would be checked,
// throwing InputError; expandFlagFiles prefixes its message with FILE:LINE.
using FlagLineCheck = std::function<void(const std::string &flag)>;

// |args| (argv[0] first) with each --flagfile=FILE[,FILE...] (or
// "--flagfile FILE") replaced by the flags FILE holds, as Abseil reads a
// flagfile: one flag per line, leading and trailing whitespace, empty lines
// and lines starting with '#' skipped. A flagfile may name flagfiles (as
// --flagfile=FILE, a path from the working directory, as Abseil reads it).
// Nothing after "--" is expanded. Throws InputError naming FILE:LINE for a
// line that is not a flag or that |check| refuses (unless --undefok is
// given, which leaves unknown flags to Abseil), and naming FILE for one
// that cannot be read.
std::vector<std::string> expandFlagFiles(const std::vector<std::string> &args,
                                         const FlagLineCheck &check);

} // namespace ampc::rt

#endif
