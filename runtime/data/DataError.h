//===- DataError.h - One-line errors about user input ------------*- C++ -*-===//
//
// Every problem with a data file, a checkpoint or a flag value is thrown as
// an InputError whose message is one line naming the file and the problem;
// trainMain prints it and exits with status 2.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_DATA_DATAERROR_H
#define AMPC_RUNTIME_DATA_DATAERROR_H

#include <stdexcept>
#include <string>

namespace ampc::rt {

class InputError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// "FILE: PROBLEM"
[[noreturn]] inline void fail(const std::string &file,
                              const std::string &problem) {
  throw InputError(file + ": " + problem);
}

} // namespace ampc::rt

#endif
