//===- FlagSyntax.cpp - Unknown flags and bad values as one-line errors ---===//
//
// Mirrors the walk of Abseil's ParseCommandLine (absl/flags/parse.cc:
// SplitNameAndValue, LocateFlag, DeduceFlagValue) so that it finds the same
// problems, and stops where that parser would act on something of its own.
//
//===----------------------------------------------------------------------===//
#include "runtime/train/FlagSyntax.h"

#include "runtime/data/DataError.h"

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace ampc::rt {

size_t trainFlagFileOffset(std::string_view file) {
  size_t i = file.find("runtime/train/");
  return i != std::string_view::npos ? i : file.find("runtime/HyperParams.def");
}

static std::string_view sv(absl::string_view s) { return {s.data(), s.size()}; }
static absl::string_view asv(std::string_view s) { return {s.data(), s.size()}; }

static bool isTrainFlag(const absl::CommandLineFlag &flag) {
  return trainFlagFileOffset(flag.Filename()) != std::string_view::npos;
}

static std::string dashed(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', '-');
  return "--" + s;
}

// What a value of the flag's type looks like, for the error.
static const char *valueKind(const absl::CommandLineFlag &f) {
  if (f.IsOfType<int64_t>() || f.IsOfType<std::optional<int64_t>>())
    return "an integer";
  if (f.IsOfType<int32_t>() || f.IsOfType<std::optional<int32_t>>())
    return "a 32-bit integer";
  if (f.IsOfType<uint64_t>() || f.IsOfType<std::optional<uint64_t>>())
    return "an integer >= 0";
  if (f.IsOfType<float>() || f.IsOfType<double>() ||
      f.IsOfType<std::optional<float>>() ||
      f.IsOfType<std::optional<double>>())
    return "a number";
  if (f.IsOfType<bool>() || f.IsOfType<std::optional<bool>>())
    return "true or false";
  if (f.IsOfType<std::string>())
    return "a string";
  return "a list"; // std::vector<std::string>: --data, --eval
}

static size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearestTrainFlag(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto &[flagName, flag] : absl::GetAllFlags())
    if (isTrainFlag(*flag))
      names.push_back(sv(flagName));
  std::sort(names.begin(), names.end()); // ties go to the first in order
  std::string_view best;
  // Two edits, one for short names (else --x would suggest --lr).
  size_t bestDistance = name.size() <= 4 ? 2 : 3;
  for (std::string_view candidate : names)
    if (size_t d = editDistance(name, candidate); d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  return best.empty() ? std::string() : dashed(best);
}

// The flag |name| names, as Abseil's LocateFlag finds it: itself, or "noX"
// for X (|negative|); null when none.
static absl::CommandLineFlag *locate(std::string_view name, bool &negative) {
  absl::CommandLineFlag *flag = absl::FindCommandLineFlag(asv(name));
  negative = false;
  if ((!flag || flag->IsRetired()) && name.substr(0, 2) == "no") {
    flag = absl::FindCommandLineFlag(asv(name.substr(2)));
    negative = flag != nullptr;
  }
  return flag && !flag->IsRetired() ? flag : nullptr;
}

// The flag name of a flag-like argument ("--name=value" -> "name").
static std::string_view nameOf(std::string_view arg) {
  arg.remove_prefix(arg.size() > 1 && arg[1] == '-' ? 2 : 1);
  return arg.substr(0, arg.find('='));
}

// "-", "--", or an argument that names a flag ("--log-every",
// "--nodrop_last=1"), but not a negative number.
static bool namesAFlag(std::string_view arg) {
  if (arg == "-")
    return true;
  if (arg.size() < 2 || arg[0] != '-')
    return false;
  std::string_view name = nameOf(arg);
  bool negative;
  return name.empty() || locate(name, negative);
}

// Abseil's usage flags, which it handles apart from flag objects
// (--version, --helpon=FILE, --only_check_args...).
static bool isUsageFlag(std::string_view name) {
  return name.substr(0, 4) == "help" || name == "version" ||
         name == "only_check_args";
}

bool givesUndefok(const std::vector<std::string> &args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i)
    if (args[i].size() > 1 && args[i][0] == '-' &&
        nameOf(args[i]) == "undefok")
      return true;
  return false;
}

void checkFlagSyntax(const std::vector<std::string> &args) {
  // --undefok applies to unknown flags before it too: with it anywhere,
  // Abseil's parser judges them all.
  if (givesUndefok(args))
    return;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    // "-" and anything not starting with '-' are positional; "--" ends the
    // flags. Both are the caller's to judge.
    if (arg.size() < 2 || arg[0] != '-')
      continue;
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    if (arg.empty())
      return;

    size_t eq = arg.find('=');
    std::string_view name = arg.substr(0, eq);
    if (name.empty() || isUsageFlag(name)) // "--=x" ends the flags, as "--"
      return;
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : arg.substr(eq + 1);
    bool assigned = eq != std::string_view::npos; // "--name=" has a value ""

    bool negative;
    absl::CommandLineFlag *flag = locate(name, negative);
    if (!flag) {
      std::string near = nearestTrainFlag(name);
      fail(dashed(name), "unknown flag" +
                             (near.empty() ? std::string()
                                           : " (did you mean " + near + "?)") +
                             "; --help lists the flags");
    }
    // --fromenv and --tryfromenv change how the rest is read; Abseil's
    // parser takes it from here (--flagfile was expanded before, FlagFile.h).
    if (!isTrainFlag(*flag))
      return;

    std::string shown = dashed(sv(flag->Name()));
    if (flag->IsOfType<bool>()) {
      if (assigned && value.empty())
        fail(shown, "'=' without a value (true or false)");
      if (negative && assigned)
        fail(dashed(name), "the negative form takes no value");
      if (!assigned)
        value = negative ? "false" : "true";
    } else {
      if (negative)
        fail(dashed(name), shown + " takes " + valueKind(*flag) +
                               ", not a boolean, so it has no negative form");
      if (!assigned) {
        // Abseil takes the next argument even when it is another flag
        // ("--metrics --log-every 1" wrote metrics to a file named
        // --log_every, with a warning), and the binary appends --data's.
        if (i + 1 == args.size() || namesAFlag(args[i + 1]))
          fail(shown, std::string("needs a value (") + valueKind(*flag) + ")");
        value = args[++i];
      }
    }
    std::string error;
    if (!flag->ParseFrom(asv(value), &error)) {
      // Abseil's text is "Illegal value 'V' specified for flag 'N'", then
      // "; " and the parser's reason where it gives one.
      size_t reason = error.find("; ");
      fail(shown, "'" + std::string(value) + "' is not " + valueKind(*flag) +
                      (reason == std::string::npos
                           ? std::string()
                           : " (" + error.substr(reason + 2) + ")"));
    }
  }
}

} // namespace ampc::rt
