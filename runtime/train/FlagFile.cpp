//===- FlagFile.cpp - --flagfile, expanded before the flags are read ------===//
#include "runtime/train/FlagFile.h"

#include "runtime/data/DataError.h"
#include "runtime/train/FlagSyntax.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ampc::rt {

namespace {

// Nesting past this is a file that names itself, directly or not; reading
// more files than this, files that name each other many times over.
constexpr int kMaxDepth = 16;
constexpr int kMaxFiles = 1000;

struct Expansion {
  std::vector<std::string> out;
  // The flags read from files and where, to check once all are read.
  std::vector<std::pair<std::string, std::string>> fromFiles;
  int files = 0;
};

// Whether |a| is --flagfile or -flagfile, with or without "=VALUE".
bool namesFlagfile(const std::string &a) {
  if (a.size() < 2 || a[0] != '-')
    return false;
  size_t start = a[1] == '-' ? 2 : 1;
  return a.compare(start, std::min(a.find('='), a.size()) - start,
                   "flagfile") == 0;
}

// The value of a --flagfile argument at args[i] (advancing i past a value
// given as the next argument), or nullptr when args[i] is another flag.
const std::string *flagFileValue(const std::vector<std::string> &args,
                                 size_t &i, std::string &inline_) {
  const std::string &a = args[i];
  if (!namesFlagfile(a))
    return nullptr;
  size_t eq = a.find('=');
  if (eq != std::string::npos) {
    inline_ = a.substr(eq + 1);
    return &inline_;
  }
  if (i + 1 == args.size())
    fail("--flagfile", "needs a value (FILE[,FILE...])");
  return &args[++i];
}

std::string trimmed(const std::string &line) {
  const char *space = " \t\r\n\v\f";
  size_t b = line.find_first_not_of(space);
  if (b == std::string::npos)
    return "";
  return line.substr(b, line.find_last_not_of(space) - b + 1);
}

void expandInto(const std::vector<std::string> &args, size_t from,
                Expansion &x, int depth);

void readFlagFile(const std::string &file, Expansion &x, int depth) {
  if (depth > kMaxDepth)
    fail(file, "flagfiles nest more than " + std::to_string(kMaxDepth) +
                   " deep (does one name itself?)");
  if (++x.files > kMaxFiles)
    fail(file, "more than " + std::to_string(kMaxFiles) +
                   " flagfiles read (do they name each other?)");
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) // it opens, and reads empty
    fail(file, "is a directory, not a flagfile");
  std::ifstream in(file);
  if (!in)
    fail(file, std::string("cannot read the flagfile (") +
                   std::strerror(errno) + ")");
  std::vector<std::string> flags;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string flag = trimmed(line);
    if (flag.empty() || flag[0] == '#')
      continue;
    std::string where = file + ":" + std::to_string(number);
    if (flag[0] != '-' || flag == "-" || flag == "--")
      fail(where, "'" + flag +
                      "' is not a flag (a flagfile holds one --name=value "
                      "per line; '#' starts a comment)");
    size_t name = flag.find_first_of(" \t=");
    if (name != std::string::npos && flag[name] != '=')
      fail(where, "'" + flag + "': write " + flag.substr(0, name) + "=" +
                      trimmed(flag.substr(name)) +
                      " (a flagfile holds one --name=value per line)");
    if (!namesFlagfile(flag))
      x.fromFiles.emplace_back(flag, where);
    else if (name == std::string::npos)
      fail(where, "'" + flag + "' needs =FILE (a flagfile holds one "
                               "--name=value per line)");
    flags.push_back(flag);
  }
  expandInto(flags, 0, x, depth);
}

void expandInto(const std::vector<std::string> &args, size_t from,
                Expansion &x, int depth) {
  for (size_t i = from; i < args.size(); ++i) {
    if (args[i] == "--") {
      x.out.insert(x.out.end(), args.begin() + long(i), args.end());
      return;
    }
    std::string inline_;
    const std::string *files = flagFileValue(args, i, inline_);
    if (!files) {
      x.out.push_back(args[i]);
      continue;
    }
    size_t begin = 0;
    do {
      size_t comma = files->find(',', begin);
      std::string file = files->substr(begin, comma - begin);
      if (file.empty())
        fail("--flagfile", "'" + *files + "' names an empty file name");
      readFlagFile(file, x, depth + 1);
      begin = comma == std::string::npos ? comma : comma + 1;
    } while (begin != std::string::npos);
  }
}

} // namespace

std::vector<std::string> expandFlagFiles(const std::vector<std::string> &args,
                                         const FlagLineCheck &check) {
  Expansion x;
  if (args.empty())
    return x.out;
  x.out.push_back(args[0]);
  expandInto(args, 1, x, 0);
  // --undefok (anywhere, before "--") lets Abseil judge unknown flags, on
  // the command line and in files alike.
  if (givesUndefok(x.out))
    return std::move(x.out);
  for (const auto &[flag, where] : x.fromFiles) {
    try {
      check(flag);
    } catch (const InputError &e) {
      throw InputError(where + ": " + e.what());
    }
  }
  return std::move(x.out);
}

} // namespace ampc::rt
