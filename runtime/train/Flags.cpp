//===- Flags.cpp - The training binary's command line (Abseil flags) -----===//
//
// Flag names are spelled with dashes (--warmup-steps); Abseil wants
// underscores, so dashes in a flag's name are rewritten before parsing.
// --data and --eval may be repeated; their values are joined.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/DataError.h"
#include "runtime/train/FlagFile.h"
#include "runtime/train/FlagSyntax.h"
#include "runtime/train/Options.h"
#include "runtime/train/Plot.h"
#include "runtime/train/StepDump.h"

#include "absl/flags/flag.h"
#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_split.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <functional>
#include <mutex>
#include <sstream>
#include <string_view>
#include <utility>

ABSL_FLAG(std::vector<std::string>, data, {},
          "Training data per model input: NAME=PATH[,NAME=PATH...] "
          "(repeatable). .npy, IDX (.idx, -ubyte, .gz) or token files "
          "(.bin/.txt/.tok, u8 tokens; PATH:u16, PATH:i32 or PATH:u32 for "
          "wider ones).");
ABSL_FLAG(std::vector<std::string>, eval, {},
          "Evaluation data, same form as --data; evaluated after training.");
ABSL_FLAG(int64_t, steps, 0,
          "Total optimizer iterations (skipped ones count; a resumed run "
          "continues up to this number).");
ABSL_FLAG(int64_t, epochs, 0,
          "Total epochs, instead of --steps (default: 1 epoch).");
ABSL_FLAG(bool, drop_last, true,
          "Drop the last partial training batch of each epoch (default true, "
          "unlike PyTorch's DataLoader: batches have the compiled static "
          "shape, and keeping it needs a loss that can mask padded rows). "
          "--no-drop-last (or --drop-last=false) keeps it: padded with "
          "copies of its samples, the padded rows' labels set to the loss's "
          "ignore_index, so that step's loss and gradient are the mean over "
          "its real samples (docs/RUNTIME.md).");
ABSL_FLAG(bool, shuffle, true,
          "Visit the training samples in a new random order each epoch "
          "(seeded by --seed; default true, as PyTorch's DataLoader with "
          "shuffle=True). --no-shuffle (or --shuffle=false) keeps the file's "
          "order: for a model whose batch rows mean something to it (a "
          "buffer with a row per batch position, time-major sequences).");
ABSL_FLAG(std::string, lr_schedule, "constant",
          "constant | cosine (to --min-lr at the last step), after warmup.");
ABSL_FLAG(float, min_lr, 0.0f, "Final learning rate of the cosine schedule.");
ABSL_FLAG(int64_t, warmup_steps, 0, "Linear warmup iterations.");
ABSL_FLAG(int64_t, decay_steps, 0,
          "Iteration at which the cosine reaches --min-lr (default: the total "
          "steps). Give it to stop early and resume on the same schedule.");
ABSL_FLAG(std::optional<uint64_t>, seed, std::nullopt,
          "Seed for initialization, shuffling and dropout (default 0; "
          "--resume keeps the checkpoint's).");
ABSL_FLAG(int64_t, log_every, 10, "Log and write metrics every N steps.");
ABSL_FLAG(std::string, metrics, "",
          "Write one JSON object per logged step to this file (.jsonl).");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Write checkpoints here (step-NNNNNNNN/ plus a `latest` pointer).");
ABSL_FLAG(int64_t, checkpoint_every, 0,
          "Checkpoint every N steps (0: only at the end).");
ABSL_FLAG(std::string, resume, "",
          "Resume from a checkpoint directory or a --checkpoint-dir.");
ABSL_FLAG(int64_t, context, 0,
          "Context length of token inputs (must match the compiled one).");
ABSL_FLAG(std::string, plot, "",
          "At the end of the run, draw its metrics (loss, loss scale, grad "
          "norm, lr, step time) into this .svg or .png file (gnuplot; "
          "runtime/train/Plot.h).");
ABSL_FLAG(std::string, init_weights, "",
          "Start from the weights in this safetensors file (ampc import "
          "--weights, or a checkpoint's model.safetensors: fine-tuning "
          "without its optimizer state).");
ABSL_FLAG(std::string, dump_step, "",
          "Write the first step's batch, gradients and state before and "
          "after it to this safetensors file (for checking the numerics).");

// Data parallel (mpirun -np N BIN ...; see docs/RUNTIME.md).
ABSL_FLAG(double, bucket_mb, 25,
          "Data parallel: FP32 gradient MiB per all-reduce bucket (more "
          "than 0, at most 1048576, and at most 2^20 buckets).");
ABSL_FLAG(std::optional<double>, comm_timeout, std::nullopt,
          "Data parallel: seconds to wait for a collective before ending the "
          "job with an error (default: env AMPC_COMM_TIMEOUT, else 300).");
ABSL_FLAG(std::string, reduce_dtype, "fp32",
          "Data parallel: gradient all-reduce type, fp32 | fp16 | bf16.");
ABSL_FLAG(float, predivide, 1.0f,
          "Data parallel, fp16/bf16 reductions: divide gradients by this "
          "before the half-precision sum (multiplied back after).");
ABSL_FLAG(bool, check_agreement, false,
          "Data parallel debug check: compare every step's skip decision, "
          "norm and clip coefficient, and the final state, across ranks.");
ABSL_FLAG(bool, overlap_allreduce, true,
          "Data parallel: start each gradient bucket's all-reduce as soon as "
          "the backward of the step's last micro-batch finishes its "
          "gradients (false: after the whole backward; env "
          "AMPC_OVERLAP_ALLREDUCE=off does the same). Same results either "
          "way.");

// Hyper-parameters, one flag per row of HyperParams.def: unset means the
// compiled-in default (listed by --help).
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  ABSL_FLAG(std::optional<type>, name, std::nullopt, help);
#include "runtime/HyperParams.def"

namespace ampc::rt {

// "weight_decay" -> "weight-decay": how --help spells flags.
static std::string flagName(std::string name) {
  for (char &c : name)
    if (c == '_')
      c = '-';
  return name;
}

static std::string usageText(const Model &model) {
  std::ostringstream os;
  const Hyper h = model.defaults();
  const CompileConfig &c = model.config();
  os << "Trains the ampc model '" << model.name() << "' (target " << c.target
     << ", amp " << c.amp << ", optimizer " << c.optimizer << ", loss scale "
     << c.lossScale << ", accum steps " << c.accumSteps << ").\n\nInputs "
     << "(dim 0 is the batch; give each one --data NAME=PATH):\n";
  for (const TensorInfo &t : model.inputs())
    os << "  " << data::describeInput(t) << "\n";
  os << "Outputs:";
  for (const TensorInfo &t : model.outputs())
    os << " " << data::describeInput(t);
  os << "\n\nExample:\n  " << "./train --data ";
  for (size_t i = 0; i < model.inputs().size(); ++i)
    os << (i ? "," : "") << model.inputs()[i].name << "=FILE";
  os << " --epochs=1 --metrics=metrics.jsonl --checkpoint-dir=ckpt\n\n"
     << "Data: .npy (any int/float dtype, converted), IDX (.gz too; u8 into a "
        "float input is scaled by 1/255), token files (a token file for an "
        "integer [B,T] input also fills an input named targets/target/labels "
        "of the same shape with the tokens shifted by one).\n"
     << "Compiled-in hyper-parameter defaults:";
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  os << " " << flagName(#name) << "=" << h.field;
#include "runtime/HyperParams.def"
  os << "\n"
     << "Flag names take dashes or underscores (--warmup-steps, "
        "--warmup_steps). Exit status 2 on bad input.";
  return os.str();
}

// Old spellings of renamed flags, after the dash rewrite.
static const std::pair<std::string_view, std::string_view> kRenamedFlags[] = {
    {"max_norm", "clip_norm"}, // --max-norm was the runtime's --clip-norm
};

// --no-drop-last for Abseil's --nodrop_last: "no_X" -> "noX" where X is a
// boolean flag.
static std::string negativeSpelling(const std::string &name) {
  if (name.rfind("no_", 0) != 0 || absl::FindCommandLineFlag(name))
    return name;
  const absl::CommandLineFlag *f = absl::FindCommandLineFlag(name.substr(3));
  return f && f->IsOfType<bool>() ? "no" + name.substr(3) : name;
}

// Rewrites dashes in flag names and old spellings, and gathers repeated
// --data/--eval values.
static std::vector<std::string>
normalizeArgs(const std::vector<std::string> &argv) {
  std::vector<std::string> out = {argv[0]};
  std::vector<std::string> data, eval;
  const size_t argc = argv.size();
  for (size_t i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      for (; i < argc; ++i)
        out.push_back(argv[i]);
      break;
    }
    size_t start = a.rfind("--", 0) == 0 ? 2 : 1;
    // A flag's name starts with a letter; "-1e-3" is a value.
    if (a.size() > 2 && a[0] == '-' &&
        std::isalpha(static_cast<unsigned char>(a[start]))) {
      size_t end = std::min(a.find('='), a.size());
      for (size_t k = start; k < end; ++k)
        if (a[k] == '-')
          a[k] = '_';
      std::string name = a.substr(start, end - start);
      for (auto [old, now] : kRenamedFlags)
        if (name == old)
          name = now;
      name = negativeSpelling(name);
      a.replace(start, end - start, name);
      if (name == "data" || name == "eval") {
        std::string value;
        if (end < a.size())
          value = a.substr(end + 1);
        else if (i + 1 < argc && argv[i + 1][0] != '-')
          value = argv[++i];
        else // NAME=PATH never starts with '-': it is the next flag
          fail("--" + name, "needs a value (NAME=PATH[,NAME=PATH...])");
        (name == "data" ? data : eval).push_back(value);
        continue;
      }
    }
    out.push_back(a);
  }
  auto join = [](const std::vector<std::string> &v) {
    std::string s;
    for (const std::string &x : v)
      s += (s.empty() ? "" : ",") + x;
    return s;
  };
  if (!data.empty())
    out.push_back("--data=" + join(data));
  if (!eval.empty())
    out.push_back("--eval=" + join(eval));
  return out;
}

#define AMPC_TRAIN_FLAGS(X)                                                    \
  X(data) X(eval) X(steps) X(epochs) X(lr_schedule) X(min_lr) X(warmup_steps) \
  X(decay_steps) X(seed) X(log_every) X(metrics) X(checkpoint_dir)             \
  X(checkpoint_every) X(resume) X(context) X(dump_step) X(plot) X(bucket_mb)  \
  X(init_weights) X(drop_last) X(shuffle)                                     \
  X(comm_timeout) X(reduce_dtype) X(predivide) X(check_agreement)         \
  X(overlap_allreduce)

// Sets every flag back to the value it had at the first call (its default).
// absl::FlagSaver would do it too, but logs each restored flag.
static void resetFlagsToDefaults() {
  static const std::vector<std::function<void()>> resets = [] {
    std::vector<std::function<void()>> r;
#define AMPC_SAVE(name)                                                        \
  r.push_back([v = absl::GetFlag(FLAGS_##name)] {                              \
    absl::SetFlag(&FLAGS_##name, v);                                           \
  });
    AMPC_TRAIN_FLAGS(AMPC_SAVE)
#define AMPC_HYPER(name, field, type, dflt, help) AMPC_SAVE(name)
#include "runtime/HyperParams.def"
#undef AMPC_SAVE
    return r;
  }();
  for (const auto &reset : resets)
    reset();
}

static void configureUsage(const Model &model) {
  static std::once_flag once;
  std::call_once(once, [&] {
    absl::SetProgramUsageMessage(usageText(model));
    absl::FlagsUsageConfig cfg;
    // Abseil files a flag under the file its ABSL_FLAG expands in: the
    // hyper-parameter flags are HyperParams.def's.
    auto ours = [](absl::string_view file) {
      return trainFlagFileOffset({file.data(), file.size()}) !=
             absl::string_view::npos;
    };
    cfg.contains_help_flags = ours;
    cfg.contains_helpshort_flags = ours;
    cfg.normalize_filename = [](absl::string_view file) {
      size_t i = trainFlagFileOffset({file.data(), file.size()});
      return std::string(i == absl::string_view::npos ? file : file.substr(i));
    };
    absl::SetFlagsUsageConfig(cfg);
  });
}

// --help (and --helpshort, --helpfull) print the usage and exit with status
// 0, as a help request is not an error (Abseil's parser would exit with 1).
static void handleHelp(const std::vector<std::string> &args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    std::string_view a = args[i];
    a.remove_prefix(a.rfind("--", 0) == 0 ? 2 : a.rfind('-', 0) == 0 ? 1 : 0);
    if (a == "help" || a == "helpshort" || a == "helpfull" || a == "h") {
      // The usage starts with the program's name, which Abseil learns only
      // in ParseCommandLine (else it prints "UNKNOWN").
      absl::flags_internal::SetProgramInvocationName(args[0]);
      std::ostringstream os;
      absl::flags_internal::FlagsHelp(
          os, "runtime/", absl::flags_internal::HelpFormat::kHumanReadable,
          absl::ProgramUsageMessage());
      std::fputs(os.str().c_str(), stdout);
      std::fflush(stdout);
      std::exit(0);
    }
  }
}

// Why the hyper-parameter |name| (HyperParams.def's spelling) changes
// nothing in a binary compiled with |c|, or "": the flag is accepted (a
// checkpoint carries every row), but a user setting it expects an effect.
static std::string unusedBecause(std::string_view name,
                                 const CompileConfig &c) {
  const bool sgd = c.optimizer == "sgd";
  if ((name == "momentum" || name == "dampening") && !sgd)
    return "its optimizer is " + c.optimizer + " (this is SGD's)";
  if ((name == "beta1" || name == "beta2" || name == "eps") && sgd)
    return "its optimizer is sgd (this is Adam's)";
  if (name == "clip_norm" && !c.clipNorm)
    return "it was compiled without clipping by norm (ampc compile "
           "--clip-norm=X)";
  if (name == "clip_value" && !c.clipValue)
    return "it was compiled without clipping by value (ampc compile "
           "--clip-value=X)";
  if (name == "init_scale" && c.lossScale == "none")
    return "it was compiled without loss scaling";
  const bool scalerOnly =
      name == "growth_factor" || name == "backoff_factor" ||
      name == "growth_interval" || name == "hysteresis" ||
      name == "min_scale" || name == "max_scale" || name == "scale_floor";
  if (scalerOnly && c.lossScale != "dynamic")
    return "its loss scale is " + c.lossScale +
           " (this is the dynamic scaler's)";
  return "";
}

TrainOptions parseTrainFlags(int argc, char **argv, const Model &model) {
  configureUsage(model);
  // A flagfile's flags are checked one by one once every file is read, so
  // that an error names the file and line.
  std::vector<std::string> args =
      normalizeArgs(expandFlagFiles({argv, argv + argc}, [&](const auto &flag) {
        checkFlagSyntax(normalizeArgs({argv[0], flag}));
      }));
  handleHelp(args);
  checkFlagSyntax(args);
  std::vector<char *> ptrs;
  for (std::string &s : args)
    ptrs.push_back(s.data());
  std::vector<char *> rest =
      absl::ParseCommandLine(int(ptrs.size()), ptrs.data());
  if (rest.size() > 1)
    fail(rest[1], "unexpected argument (inputs are given with --data "
                  "NAME=PATH)");

  TrainOptions o;
  o.data = data::parseDataSpecs(absl::GetFlag(FLAGS_data), "--data");
  o.eval = data::parseDataSpecs(absl::GetFlag(FLAGS_eval), "--eval");
  o.steps = absl::GetFlag(FLAGS_steps);
  o.epochs = absl::GetFlag(FLAGS_epochs);
  o.dropLast = absl::GetFlag(FLAGS_drop_last);
  o.shuffle = absl::GetFlag(FLAGS_shuffle);
  if (o.steps < 0 || o.epochs < 0)
    fail("--steps/--epochs", "must not be negative");
  if (o.steps > 0 && o.epochs > 0)
    fail("--steps/--epochs", "give one of them, not both");
  std::string sched = absl::GetFlag(FLAGS_lr_schedule);
  if (sched == "constant")
    o.schedule = LrSchedule::Constant;
  else if (sched == "cosine")
    o.schedule = LrSchedule::Cosine;
  else
    fail("--lr-schedule", "unknown schedule '" + sched +
                              "' (constant or cosine)");
  o.minLr = absl::GetFlag(FLAGS_min_lr);
  // NaN or inf made every weight NaN at the first step, a negative one an
  // ascent, both silently (as --lr, which the hyper-parameter rules check).
  if (!(o.minLr >= 0.0f) || std::isinf(o.minLr))
    fail("--min-lr", "must be a finite number >= 0");
  o.warmupSteps = absl::GetFlag(FLAGS_warmup_steps);
  o.decaySteps = absl::GetFlag(FLAGS_decay_steps);
  if (o.warmupSteps < 0)
    fail("--warmup-steps", "must not be negative");
  if (o.decaySteps < 0)
    fail("--decay-steps", "must not be negative (0: the total steps)");
  o.seed = absl::GetFlag(FLAGS_seed);
  o.logEvery = absl::GetFlag(FLAGS_log_every);
  if (o.logEvery <= 0)
    fail("--log-every", "must be positive");
  o.metricsPath = absl::GetFlag(FLAGS_metrics);
  o.checkpointDir = absl::GetFlag(FLAGS_checkpoint_dir);
  o.checkpointEvery = absl::GetFlag(FLAGS_checkpoint_every);
  if (o.checkpointEvery < 0)
    fail("--checkpoint-every", "must not be negative (0: only at the end)");
  o.resume = absl::GetFlag(FLAGS_resume);
  o.context = absl::GetFlag(FLAGS_context);
  if (o.context < 0)
    fail("--context", "must not be negative");
  o.dataParallel.bucketMb = absl::GetFlag(FLAGS_bucket_mb);
  o.dataParallel.commTimeout = absl::GetFlag(FLAGS_comm_timeout);
  o.dataParallel.reduceDtype = absl::GetFlag(FLAGS_reduce_dtype);
  o.dataParallel.predivide = absl::GetFlag(FLAGS_predivide);
  o.dataParallel.checkAgreement = absl::GetFlag(FLAGS_check_agreement);
  o.dataParallel.overlap = absl::GetFlag(FLAGS_overlap_allreduce);
  o.dumpStep = absl::GetFlag(FLAGS_dump_step);
  o.initWeights = absl::GetFlag(FLAGS_init_weights);
  o.plotPath = absl::GetFlag(FLAGS_plot);
  if (!o.plotPath.empty()) { // before training, not after it
    plot::imageType(o.plotPath);
    plot::findGnuplot();
  }

  // The hyper-parameter flags that were given, by Hyper field.
  struct Given {
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  std::optional<type> field = absl::GetFlag(FLAGS_##name);
#include "runtime/HyperParams.def"
  } g;
  if (g.growthInterval && *g.growthInterval <= 0)
    fail("--growth-interval", "must be positive");
  if (g.hysteresis && *g.hysteresis <= 0)
    fail("--hysteresis", "must be positive");
  if (g.scaleFloor && !(*g.scaleFloor >= 0.0f))
    fail("--scale-floor", "must be 0 or more");
  if (g.maxConsecutiveSkips && *g.maxConsecutiveSkips < 0)
    fail("--max-consecutive-skips", "must be 0 (never) or more");
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  if (g.field)                                                                 \
    if (std::string why = unusedBecause(#name, model.config()); !why.empty())  \
      o.unusedFlagNotes.push_back("--" + flagName(#name) +                     \
                                  " changes nothing in this binary: " + why);
#include "runtime/HyperParams.def"
  o.applyHyperFlags = [g](Hyper &h) {
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  if (g.field)                                                                 \
    h.field = *g.field;
#include "runtime/HyperParams.def"
  };
  return o;
}

// Every step allocates and frees the same temporaries (widened halves, the
// kernels' scratch). glibc gives memory freed at the heap's top back to the
// kernel and serves large blocks by mmap, so each step faulted the same
// pages in again: 330 page faults and 6% of gpt_tiny's CPU step. Fixed
// thresholds (32 MiB is the largest mmap threshold glibc takes) keep them.
static void keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int trainMain(int argc, char **argv, Model &model) {
  resetFlagsToDefaults(); // trainMain may run more than once (tests)
  keepFreedMemory();
  try {
    TrainOptions o = parseTrainFlags(argc, argv, model);
    if (o.dumpStep.empty())
      return runTraining(model, o);
    std::unique_ptr<Model> dumper = makeStepDumper(model, o.dumpStep);
    return runTraining(*dumper, o);
  } catch (const InputError &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument &e) {
    // A kernel rejected a value read from the data (a class label out of
    // range): bad input too, so one line and status 2, not an abort.
    std::fflush(stdout);
    std::fprintf(stderr, "error: bad value in the data: %s\n", e.what());
    return 2;
  }
}

} // namespace ampc::rt
