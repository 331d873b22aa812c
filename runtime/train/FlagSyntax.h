//===- FlagSyntax.h - The training binary's flag errors, as one line -*- C++ -*-//
//
// Abseil's parser reports an unknown flag, a missing value or a value that
// does not parse with its own "ERROR: ..." lines and exits with status 1 from
// inside ParseCommandLine. checkFlagSyntax reads the arguments as that parser
// will, first, and throws the first such problem as an InputError: one line,
// status 2, as every other bad input to a compiled binary.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TRAIN_FLAGSYNTAX_H
#define AMPC_RUNTIME_TRAIN_FLAGSYNTAX_H

#include <string>
#include <string_view>
#include <vector>

namespace ampc::rt {

// Where the training binary's part of a flag's defining file starts
// (runtime/train/... or runtime/HyperParams.def), npos for other flags
// (Abseil's own: --flagfile, --undefok, --version...).
size_t trainFlagFileOffset(std::string_view file);

// `args` as after the dash rewrite (argv[0] first, names with underscores).
// A value that parses is set now, as ParseCommandLine will set it again.
// Arguments that name one of Abseil's own flags (--fromenv, --version,
// --helpon...) are left to its parser, with everything after them; with
// --undefok anywhere, all of them are.
void checkFlagSyntax(const std::vector<std::string> &args);

// Whether an argument before "--" names Abseil's --undefok, which leaves
// unknown flags (before it too) to Abseil's parser.
bool givesUndefok(const std::vector<std::string> &args);

// The training flag nearest `name` (underscores) within two edits (one for
// names of up to 4 characters), dashed, or "" (for "did you mean --steps?").
std::string nearestTrainFlag(std::string_view name);

} // namespace ampc::rt

#endif
