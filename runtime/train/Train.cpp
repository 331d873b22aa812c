//===- Train.cpp - The training loop -------------------------------------===//
//
// Per iteration: beginStep, accumSteps x (next batch, forwardBackward), the
// data-parallel all-reduce, step(hyper, micro-batches x ranks). The lr
// schedule sets hyper.lr per iteration. Everything a resumed run needs to
// continue bitwise (weights, moments, scaler, optimizer step, iteration,
// data position, seed, hyper) goes into the checkpoint.
//
// Data parallel (see DataParallel.h): batches are global (ranks x the model's
// batch), each rank takes its slice; the checkpoint stores the position in
// global batches, so it resumes on any number of ranks with the same global
// batch. Only rank 0 prints, writes metrics and checkpoints; every rank
// loads --resume. An input error on any rank ends the whole job.
//
// --no-drop-last keeps each epoch's last partial batch (drop_last=False):
// padded with copies of its samples, the padded rows' labels set to the
// loss's ignore_index, so that micro-batch's loss and gradient are the mean
// over its real samples. Under gradient accumulation it is one of the
// step's micro-batches and weighs as much as a full one (the step divides
// by accum x ranks, as a PyTorch loop doing (loss / accum).backward()
// does); data parallel, its real samples are split evenly over the ranks
// and each rank's mean weighs the same (as DDP averages per-rank
// gradients). Batch statistics (batch_norm) see the padded copies.
//
// A halted scaler (num::finishStep: the loss scale would fall below
// --scale-floor, or --max-consecutive-skips skipped steps in a row) ends the
// run with one error line and exit status 3 (kExitHalted), before any step
// touches a weight with an unusable scale, and without a checkpoint: the
// last one written stays the latest. The epilogue decides (on the GPU too,
// and refuses every later step); the host sees it in the stats it reads at
// log steps, checkpoint steps and the last step.
//
//===----------------------------------------------------------------------===//
#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/data/DataError.h"
#include "runtime/train/DataParallel.h"
#include "runtime/train/Evaluate.h"
#include "runtime/train/InitWeights.h"
#include "runtime/train/Options.h"
#include "runtime/train/Plot.h"
#include "runtime/train/Report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <zlib.h>

namespace ampc::rt {

using Clock = std::chrono::steady_clock;

// Exit status of a run that halted (num::finishStep): not 2, which is bad
// input found before or while reading it, and not 1 (a crash, a usage
// error): the inputs were valid and training itself diverged, which a job
// script may want to tell apart (resume from the last checkpoint with other
// settings rather than fix a file).
constexpr int kExitHalted = 3;

static std::string fmtFloat(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

static double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

static void printEval(const EvalResult &e, Reporter &rep, int64_t step) {
  std::printf("eval: %lld samples", (long long)e.samples);
  std::printf(", loss %.4f", e.loss);
  if (e.lossSamples != e.samples)
    std::printf(" (over the %lld samples of full batches: the model has no "
                "ignore_index input to mask a partial batch with)",
                (long long)e.lossSamples);
  if (e.hasAccuracy)
    std::printf(", accuracy %.4f", e.accuracy);
  std::printf("\n");
  nlohmann::ordered_json j = {{"step", step}, {"eval_loss", e.loss}};
  if (std::isfinite(e.loss) == false)
    j["eval_loss"] = nullptr;
  if (e.hasAccuracy)
    j["eval_accuracy"] = e.accuracy;
  j["eval_samples"] = e.samples;
  if (e.lossSamples != e.samples)
    j["eval_loss_samples"] = e.lossSamples;
  rep.writeJson(j.dump());
}

static int trainLoop(Model &model, const TrainOptions &o, DataParallel &dp);

// The shortest text of |v| that reads back to the same float (an FP32
// hyper-parameter: 0.001, not 0.00100000005).
static std::string exact(float v) {
  char buf[40];
  for (int prec = 6; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, double(v));
    if (std::strtof(buf, nullptr) == v)
      break;
  }
  return buf;
}

// The same for a double.
static std::string exact(double v) {
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

static std::string exact(int32_t v) { return std::to_string(v); }

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// "size N, crc32 of the first 64 KiB X" of a data file, or why not.
static std::string fileSummary(const std::string &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return "(unreadable)";
  in.seekg(0, std::ios::end);
  const long long size = (long long)in.tellg();
  in.seekg(0);
  std::vector<char> head(65536);
  in.read(head.data(), std::streamsize(head.size()));
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef *>(head.data()),
              uInt(in.gcount()));
  char buf[80];
  std::snprintf(buf, sizeof buf, "size %lld, crc32 of the first 64 KiB %08lx",
                size, (unsigned long)crc);
  return buf;
}

// Everything that must be equal on every rank of a data-parallel run, in a
// fixed order (DataParallel::checkRanksAgree). Left out, as they may differ
// or only rank 0 uses them: --metrics, --checkpoint-dir, --checkpoint-every,
// --log-every (rank 0 writes), --comm-timeout (each rank's own deadline),
// --dump-step (a debugging file) and the file paths themselves (a rank may
// read its copy elsewhere; their sizes and header checksums are compared).
static DataParallel::Fingerprint
fingerprint(Model &model, const TrainOptions &o, uint64_t seed,
            const Hyper &hyper, const std::optional<TrainState> &resumed) {
  DataParallel::Fingerprint f;
  auto add = [&](std::string name, std::string value) {
    f.emplace_back(std::move(name), std::move(value));
  };
  add("model.name", model.name());
  add("model.inputs", std::to_string(model.inputs().size()));
  for (const TensorInfo &t : model.inputs()) {
    add("input." + t.name + ".dtype", data::dtypeName(t.dtype));
    add("input." + t.name + ".shape", shapeText(t.shape));
  }
  add("model.params", std::to_string(model.params().size()));
  for (const ParamInfo &p : model.params()) {
    add("param." + p.name + ".shape", shapeText(p.shape));
    const num::InitSpec &i = p.init;
    add("param." + p.name + ".init",
        std::to_string(int(i.kind)) + " " + exact(i.p0) + " " + exact(i.p1) +
            " " + exact(i.lo) + " " + exact(i.hi));
  }
  const CompileConfig &c = model.config();
  add("config.target", c.target);
  add("config.amp", c.amp);
  add("config.optimizer", c.optimizer);
  add("config.loss_scale", c.lossScale);
  add("config.nesterov", std::to_string(c.nesterov));
  add("config.clip_norm", std::to_string(c.clipNorm));
  add("config.clip_value", std::to_string(c.clipValue));
  add("config.accum_steps", std::to_string(c.accumSteps));
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  add("hyper." #name, exact(hyper.field));
#include "runtime/HyperParams.def"
  add("seed", std::to_string(seed));
  add("steps", std::to_string(o.steps));
  add("epochs", std::to_string(o.epochs));
  add("drop_last", std::to_string(o.dropLast));
  add("shuffle", std::to_string(o.shuffle));
  add("schedule", o.schedule == LrSchedule::Cosine ? "cosine" : "constant");
  add("min_lr", exact(o.minLr));
  add("warmup_steps", std::to_string(o.warmupSteps));
  add("decay_steps", std::to_string(o.decaySteps));
  add("context", std::to_string(o.context));
  const DataParallelOptions &d = o.dataParallel;
  add("reduce_dtype", d.reduceDtype);
  add("bucket_mb", exact(d.bucketMb));
  add("predivide", exact(d.predivide));
  add("check_agreement", std::to_string(d.checkAgreement));
  add("resume", resumed ? "step " + std::to_string(resumed->iteration)
                        : std::string("(none)"));
  for (const auto *specs : {&o.data, &o.eval}) {
    const char *what = specs == &o.data ? "data" : "eval";
    add(std::string(what) + ".files", std::to_string(specs->size()));
    for (const data::DataSpec &s : *specs) {
      std::string key = std::string(what) + "." + s.input;
      add(key + ".token_type", std::to_string(int(s.tokenType)));
      add(key + ".file", fileSummary(s.path));
    }
  }
  return f;
}

// Why a step was skipped, for the metrics.
static const char *skipReason(const Model &model) {
  return model.config().lossScale == "none" ? "nonfinite" : "overflow";
}

// Overflow attribution of a skipped step's record: the parameters whose
// gradients held inf/NaN. Data parallel: the epilogue checks the gradients
// after the all-reduce, so the flags are the same on every rank, and a
// gradient non-finite on any rank is non-finite in the sum: rank 0's flags
// are the union over the ranks (DataParallel.h, AmpSync.h).
static void attribute(Model &model, StepRecord &r) {
  if (!r.skipped)
    return;
  std::vector<std::string> names;
  for (const ParamInfo &p : model.params())
    names.push_back(p.name);
  attributeNonFinite(r, names, model.nonFiniteGrads());
}

// The end-of-run line on repeated skips (Report.h, skipSummary).
static void printSkipSummary(Model &model, int64_t skipped) {
  if (skipped <= 0)
    return;
  std::vector<std::string> names;
  for (const ParamInfo &p : model.params())
    names.push_back(p.name);
  std::string line = skipSummary(skipped, names, model.nonFiniteCounts());
  std::printf("%s\n", line.c_str());
}

// --plot: the run's metrics (the file, which holds a resumed run's earlier
// steps too, else the lines kept in memory) drawn at the end. A failure
// to draw is reported (status 2) after the training finished.
static void writePlot(const TrainOptions &o, const Model &model,
                      const Reporter &rep) {
  std::fflush(stdout);
  plot::PlotOptions po;
  po.output = o.plotPath;
  po.title = model.name() + " (" + model.config().target + ", amp " +
             model.config().amp + ")";
  plot::RunMetrics run;
  if (!o.metricsPath.empty()) {
    run = plot::readMetrics(o.metricsPath, model.config().amp == "off"
                                               ? "fp32"
                                               : model.config().amp);
  } else {
    std::string text;
    for (const std::string &l : rep.lines())
      text += l + "\n";
    run = plot::parseMetrics(text, "--plot", model.config().amp == "off"
                                                 ? "fp32"
                                                 : model.config().amp);
  }
  plot::renderPlot({run}, po);
  std::printf("plot: %s\n", o.plotPath.c_str());
}

int runTraining(Model &model, const TrainOptions &o) {
  if (model.inputs().empty())
    fail(model.name(), "model has no inputs");
  DataParallel dp(model, o.dataParallel);
  try {
    return trainLoop(model, o, dp);
  } catch (const InputError &e) {
    if (dp.worldSize() == 1)
      throw;
    // The peers may be waiting in a collective: end them all, now.
    std::fflush(stdout);
    dp.abort(e.what());
  }
}

static int trainLoop(Model &model, const TrainOptions &o, DataParallel &dp) {
  const auto &inputs = model.inputs();
  const bool root = dp.isRoot();
  const int64_t batch = inputs[0].shape.empty() ? 1 : inputs[0].shape[0];
  const int64_t globalBatch = batch * dp.worldSize();
  const int accum = std::max(1, model.config().accumSteps);

  // Resume first: its seed and hyper-parameters are the base.
  std::optional<TrainState> resumed;
  std::string ckpt;
  if (!o.resume.empty()) {
    ckpt = resolveCheckpoint(o.resume);
    resumed = readTrainState(ckpt, model);
  }
  uint64_t seed = resumed ? resumed->seed : o.seed.value_or(0);
  if (root && resumed && o.seed && *o.seed != resumed->seed)
    std::fprintf(stderr, "note: --seed=%llu ignored: resuming with the "
                         "checkpoint's seed %llu\n",
                 (unsigned long long)*o.seed, (unsigned long long)seed);
  // The checkpoint holds the weights: --resume wins over --init-weights.
  if (root && resumed && !o.initWeights.empty())
    std::fprintf(stderr, "note: --init-weights=%s ignored: resuming from %s\n",
                 o.initWeights.c_str(), ckpt.c_str());
  if (root)
    for (const std::string &note : o.unusedFlagNotes)
      std::fprintf(stderr, "note: %s\n", note.c_str());
  Hyper hyper = resumed ? resumed->hyper : model.defaults();
  o.applyHyperFlags(hyper);
  // The same rules as a checkpoint's values (readTrainState), so every
  // checkpoint this run writes can be resumed.
  std::string badHyper;
  if (std::string problem = checkHyper(hyper, &badHyper); !problem.empty()) {
    std::replace(badHyper.begin(), badHyper.end(), '_', '-');
    fail("--" + badHyper, problem);
  }
  if (resumed)
    checkResumedScaler(ckpt, *resumed, hyper);

  // Data.
  bool wantTrain = o.steps > 0 || o.epochs > 0 || o.eval.empty() ||
                   !o.data.empty();
  std::optional<data::Dataset> train, eval;
  if (wantTrain) {
    if (o.data.empty()) {
      std::string names;
      for (const TensorInfo &t : inputs)
        names += (names.empty() ? "" : ",") + t.name + "=FILE";
      fail("--data", "no training data given (use --data " + names + ")");
    }
    train = data::loadDataset(inputs, o.data, o.context, "--data");
  }
  if (!o.eval.empty())
    eval = data::loadDataset(inputs, o.eval, o.context, "--eval");
  // Before the first collective: ranks that would train different things
  // (or post mismatched collectives) end here, with one line. A file that
  // does not load is that rank's own error (above), ending the job.
  dp.checkRanksAgree(fingerprint(model, o, seed, hyper, resumed));

  model.initialize(seed, hyper);
  int64_t initTracked = 0;
  if (!o.initWeights.empty() && !resumed)
    initTracked = loadInitWeights(o.initWeights, model);
  TrainState st;
  st.seed = seed;
  st.batchesTracked = initTracked;
  if (resumed) {
    restoreCheckpoint(ckpt, model, *resumed);
    st = *resumed;
    st.seed = seed;
    if (train && (st.numSamples != train->numSamples ||
                  st.batchSize != globalBatch))
      fail(ckpt, "checkpoint was trained on " +
                     std::to_string(st.numSamples) +
                     " samples in (global) batches of " +
                     std::to_string(st.batchSize) + "; --data has " +
                     std::to_string(train->numSamples) + " in batches of " +
                     std::to_string(globalBatch) +
                     (dp.worldSize() > 1
                          ? " (" + std::to_string(dp.worldSize()) +
                                " ranks x " + std::to_string(batch) + ")"
                          : std::string()));
    // The position counts batches of one order; the other order would
    // repeat some samples of this epoch and skip others.
    if (train && st.shuffle != o.shuffle)
      fail("--shuffle", std::string("the checkpoint's data position is in ") +
                            (st.shuffle ? "the shuffled" : "the file's") +
                            " order; resume with --shuffle=" +
                            (st.shuffle ? "true" : "false"));
    if (root)
      std::printf("resumed from %s at step %lld\n", ckpt.c_str(),
                  (long long)st.iteration);
  }
  if (root && dp.worldSize() > 1)
    std::printf("data parallel: %d ranks x batch %lld = global batch %lld\n",
                dp.worldSize(), (long long)batch, (long long)globalBatch);

  Reporter rep(root ? o.metricsPath : std::string(),
               /*append=*/resumed.has_value());
  if (!o.plotPath.empty())
    rep.keepLines();
  // Skipped steps of this run, for the summary at its end.
  const int64_t skippedBefore = model.scaler().skippedSteps;
  const bool plotting = root && !o.plotPath.empty();
  int64_t total = 0;
  float finalLoss = st.lastLoss;
  if (train) {
    // --drop-last is the default, unlike PyTorch's DataLoader: the batch
    // shape is compiled in, so a kept partial batch is padded and its loss
    // masked, which only a loss with an ignore_index input allows; and the
    // steps of every earlier run (and their checkpoints' data positions)
    // stay as they were. --no-drop-last keeps it (Dataset.h, Batcher).
    const int64_t partial = train->numSamples % globalBatch;
    const bool keepPartial = !o.dropLast && partial > 0;
    if (keepPartial && !canMaskLoss(inputs))
      fail("--no-drop-last",
           "the model's loss has no integer input with an ignore_index "
           "(a cross_entropy or nll_loss label) to mask the padded rows of "
           "the last partial batch with; its loss would count them");
    data::Batcher batcher(*train, globalBatch, seed, o.shuffle);
    batcher.shard(dp.rank() * batch, batch);
    if (keepPartial)
      batcher.keepPartialBatch(dp.worldSize());
    batcher.seek(st.epoch, st.batchInEpoch);
    int64_t perEpoch = batcher.batchesPerEpoch();
    if (perEpoch == 0)
      fail("--data", std::to_string(train->numSamples) +
                         " training samples are fewer than one global batch "
                         "of " + std::to_string(globalBatch) +
                         (o.dropLast ? " (--no-drop-last keeps it)" : ""));
    if (root && partial && (!keepPartial || partial < dp.worldSize()))
      std::printf("note: %lld training samples; the last partial batch of "
                  "%lld is dropped each epoch%s\n",
                  (long long)train->numSamples, (long long)partial,
                  keepPartial ? " (fewer samples than ranks)" : "");
    else if (root && keepPartial)
      std::printf("note: %lld training samples; each epoch ends with a "
                  "partial batch of %lld (padded to %lld and masked)\n",
                  (long long)train->numSamples, (long long)partial,
                  (long long)globalBatch);
    if (o.steps > 0) {
      total = o.steps;
    } else {
      int64_t batches;
      if (__builtin_mul_overflow(std::max<int64_t>(1, o.epochs), perEpoch,
                                 &batches))
        fail("--epochs", std::to_string(o.epochs) + " epochs of " +
                             std::to_string(perEpoch) +
                             " batches do not fit in 64-bit step counts");
      total = std::max<int64_t>(1, batches / accum);
    }
    LrSchedule sched{o.schedule, hyper.lr, o.minLr, o.warmupSteps,
                     o.decaySteps > 0 ? o.decaySteps : total};
    st.numSamples = train->numSamples;
    st.batchSize = globalBatch;
    st.worldSize = dp.worldSize();
    st.shuffle = o.shuffle;
    std::string lastCheckpoint = resumed ? ckpt : std::string();
    auto saveAt = [&](int64_t iteration) {
      if (o.checkpointDir.empty() || !dp.isRoot())
        return;
      st.iteration = iteration;
      st.epoch = batcher.epoch();
      st.batchInEpoch = batcher.batchInEpoch();
      st.hyper = hyper;
      st.lastLoss = finalLoss;
      std::string where = saveCheckpoint(o.checkpointDir, model, st);
      lastCheckpoint = where;
      rep.endProgress();
      std::printf("checkpoint: %s\n", where.c_str());
    };

    const int64_t startIter = st.iteration;
    double windowSec = 0, runSec = 0;
    int64_t windowSteps = 0;

    // The run halted (see the top of the file): a metrics line for the
    // halting step, one error line, status 3. |s| are the halting step's
    // stats (the GPU keeps them while it refuses later steps); |it| is the
    // iteration at which the host saw them.
    auto stopHalted = [&](const StepStats &s, int64_t it) {
      const ScalerState sc = model.scaler(); // the GPU's: one download
      const int64_t haltStep = it + 1 - sc.refusedSteps;
      const int64_t unchangedSince = haltStep - sc.consecutiveSkips;
      const bool floor = sc.halted == num::kHaltScaleFloor;
      StepRecord r;
      r.step = haltStep;
      r.epoch = double(batcher.epoch()) +
                double(batcher.batchInEpoch() - sc.refusedSteps * accum) /
                    double(perEpoch);
      r.loss = s.loss;
      r.lossScale = s.scaleUsed;
      r.gradNorm = s.gradNorm;
      r.clipCoef = s.clipCoef;
      r.skipped = s.skipped;
      r.skipReason = skipReason(model);
      attribute(model, r);
      r.halted = floor ? "scale_floor" : "max_consecutive_skips";
      r.skippedTotal = sc.skippedSteps;
      r.lr = learningRate(sched, haltStep - 1);
      r.stepTimeMs = 1e3 * windowSec / double(windowSteps);
      r.samplesPerSec =
          windowSec > 0 ? double(windowSteps * accum * globalBatch) / windowSec
                        : 0;
      if (!root)
        return kExitHalted;
      rep.log(r, total);
      rep.endProgress();
      printSkipSummary(model, sc.skippedSteps - skippedBefore);
      if (plotting) {
        // The halt is the error this run reports; a plot that fails (gnuplot
        // was found at start-up) is only noted.
        try {
          writePlot(o, model, rep);
        } catch (const InputError &e) {
          std::printf("note: no plot: %s\n", e.what());
        }
      }
      std::fflush(stdout);
      std::string why =
          floor ? "loss scale collapsed: " +
                      std::to_string(sc.consecutiveSkips) +
                      " consecutive non-finite steps, scale would fall to " +
                      fmtFloat(sc.haltScale) + " below the floor " +
                      fmtFloat(hyper.scaleFloor) + " (--scale-floor)"
                : "too many skipped steps: " +
                      std::to_string(sc.consecutiveSkips) +
                      " consecutive non-finite steps (--max-consecutive-"
                      "skips " +
                      std::to_string(hyper.maxConsecutiveSkips) + ")";
      std::string ckptNote = "no checkpoint written";
      if (!lastCheckpoint.empty())
        ckptNote += ", the latest is " + lastCheckpoint;
      std::fprintf(
          stderr,
          "error: %s (step %lld); weights unchanged since step %lld; %s. "
          "Look for inf/NaN in the data and the loss, or lower --lr%s.\n",
          why.c_str(), (long long)haltStep, (long long)unchangedSince,
          ckptNote.c_str(),
          floor ? "; --scale-floor and --min-scale change the floor" : "");
      return kExitHalted;
    };

    std::vector<std::vector<uint8_t>> buf;
    std::vector<const void *> ptrs(inputs.size());
    for (int64_t it = startIter; it < total; ++it) {
      auto t0 = Clock::now();
      Hyper h = hyper;
      h.lr = learningRate(sched, it);
      model.beginStep(it);
      for (int micro = 0; micro < accum; ++micro) {
        if (int64_t real = batcher.next(buf); real < batch)
          maskPaddedRows(inputs, buf, batch, real);
        for (size_t i = 0; i < inputs.size(); ++i)
          ptrs[i] = buf[i].data();
        dp.beforeMicroBatch(micro, accum);
        model.forwardBackward(ptrs.data(), micro);
        ++st.batchesTracked; // batch_norm's num_batches_tracked
      }
      dp.allReduceGradients();
      bool last = it + 1 == total;
      bool logNow = (it + 1) % o.logEvery == 0 || last;
      bool saveNow =
          o.checkpointEvery > 0 && (it + 1) % o.checkpointEvery == 0 && !last;
      // A GPU model copies its stats to the host only when asked; the
      // agreement check compares them every step. Checkpoint steps read
      // them too (they wait for the device anyway), to see a halt.
      model.setStatsWanted(logNow || saveNow || dp.checksAgreement());
      StepStats s = model.step(h, float(accum * dp.worldSize()));
      dp.afterStep(s);
      if (logNow)
        finalLoss = s.loss;
      double sec = secondsSince(t0);
      windowSec += sec;
      runSec += sec;
      ++windowSteps;
      if (s.halted)
        return stopHalted(s, it);

      if (logNow) {
        StepRecord r;
        r.step = it + 1;
        r.epoch = double(batcher.epoch()) +
                  double(batcher.batchInEpoch()) / double(perEpoch);
        r.loss = s.loss;
        r.lossScale = s.scaleUsed;
        r.gradNorm = s.gradNorm;
        r.clipCoef = s.clipCoef;
        r.skipped = s.skipped;
        if (s.skipped)
          r.skipReason = skipReason(model);
        attribute(model, r);
        if (model.config().clipNorm)
          r.clipNorm = h.clipNorm;
        r.skippedTotal = model.scaler().skippedSteps;
        r.lr = h.lr;
        r.stepTimeMs = 1e3 * windowSec / double(windowSteps);
        double samples = double(windowSteps * accum * globalBatch);
        r.samplesPerSec = windowSec > 0 ? samples / windowSec : 0;
        if (train->tokensPerSample)
          r.tokensPerSec = r.samplesPerSec * double(train->tokensPerSample);
        if (root)
          rep.log(r, total);
        windowSec = 0;
        windowSteps = 0;
      }
      if (saveNow)
        saveAt(it + 1);
    }
    int64_t ran = total - startIter;
    if (ran > 0 || !resumed)
      saveAt(std::max(total, startIter));
    rep.endProgress();
    if (uint64_t sum = dp.checkStateAgreement(); sum && root)
      std::printf("agreement: %d ranks end with identical state (checksum "
                  "%016llx)\n",
                  dp.worldSize(), (unsigned long long)sum);
    if (root && ran > 0) {
      std::printf("done: %lld steps (%lld skipped in total), final loss %.4f, "
                  "%.3g ms/step, %.0f samples/s\n",
                  (long long)total, (long long)model.scaler().skippedSteps,
                  finalLoss, 1e3 * runSec / double(ran),
                  double(ran * accum * globalBatch) / std::max(runSec, 1e-9));
      printSkipSummary(model, model.scaler().skippedSteps - skippedBefore);
      if (OverlapStats ov = dp.overlapStats(); ov.started)
        std::printf("data parallel: %zu buckets a step; %zu of %zu started "
                    "before the backward's last gradient (overlap %s)\n",
                    ov.buckets, ov.startedEarly, ov.started,
                    ov.active ? "on" : "off");
    } else if (root)
      std::printf("nothing to do: already at step %lld of %lld\n",
                  (long long)startIter, (long long)total);
  }
  if (eval) {
    EvalResult e = evaluateDataset(
        model, *eval, dp.rank(), dp.worldSize(),
        [&](double *v, size_t n) { dp.sum(v, n); });
    if (root)
      printEval(e, rep, std::max(total, st.iteration));
  }
  if (plotting)
    writePlot(o, model, rep);
  return 0;
}

} // namespace ampc::rt
