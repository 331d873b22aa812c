//===- Checkpoint.cpp - Saving and resuming training ---------------------===//
#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/HyperRules.h"
#include "runtime/checkpoint/AtomicFile.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/Array.h"
#include "runtime/data/DataError.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string_view>
#include <type_traits>

namespace fs = std::filesystem;

namespace ampc::rt {

using json = nlohmann::ordered_json;

constexpr const char *kModelFile = "model.safetensors";
constexpr const char *kOptimizerFile = "optimizer.safetensors";

// One key per row of HyperParams.def, under its name.
static json hyperToJson(const Hyper &h) {
  json j = json::object();
#define AMPC_HYPER(name, field, type, dflt, help) j[#name] = h.field;
#include "runtime/HyperParams.def"
  return j;
}

static json configToJson(const CompileConfig &c) {
  return {{"target", c.target},         {"amp", c.amp},
          {"optimizer", c.optimizer},   {"loss_scale", c.lossScale},
          {"nesterov", c.nesterov},     {"clip_norm", c.clipNorm},
          {"clip_value", c.clipValue},  {"accum_steps", c.accumSteps}};
}

static uint32_t crc32Of(const void *data, size_t n) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  const auto *p = static_cast<const Bytef *>(data);
  while (n > 0) { // zlib takes uInt lengths
    uInt chunk = uInt(std::min<size_t>(n, size_t(1) << 30));
    crc = ::crc32(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return uint32_t(crc);
}

static std::string hex8(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

std::string checkpointName(int64_t iteration) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "step-%08lld", (long long)iteration);
  return buf;
}

std::string saveCheckpoint(const std::string &dir, Model &model,
                           const TrainState &st) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    fail(dir, "cannot create checkpoint directory: " + ec.message());
  std::string name = checkpointName(st.iteration);
  fs::path tmp = fs::path(dir) / ("." + name + ".tmp");
  fs::path final = fs::path(dir) / name;
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec)
    fail(tmp.string(), "cannot create: " + ec.message());

  // The model's state_dict (parameters, buffers) and the optimizer's state
  // in two files, so model.safetensors loads into an nn.Module as it is.
  std::vector<F32Tensor> modelTensors, optimizerTensors;
  json shapes = json::object();
  for (const StateTensor &t : model.stateTensors()) {
    (t.optimizer ? optimizerTensors : modelTensors)
        .push_back({t.name, t.shape, t.data});
    shapes[t.name] = t.shape;
  }
  const ScalerState &sc = model.scaler();
  std::map<std::string, std::string> meta = {
      {"format", "ampc"},
      {"model", model.name()},
      {"step", std::to_string(st.iteration)},
      {"optimizer_step", std::to_string(model.optimizerStep())}};
  // The checksums are of the very bytes written (and fsynced) into the
  // directory that is renamed into place below.
  json files = json::object();
  auto write = [&](const char *file, const std::vector<F32Tensor> &tensors,
                   const std::vector<I64Tensor> &ints = {}) {
    std::string bytes = encodeSafetensors(tensors, meta, ints);
    writeFileSynced((tmp / file).string(), bytes);
    files[file] = {{"bytes", bytes.size()},
                   {"crc32", hex8(crc32Of(bytes.data(), bytes.size()))}};
  };
  // batch_norm's num_batches_tracked: int64 scalars, in the state_dict.
  std::vector<I64Tensor> counters;
  for (const std::string &c : model.batchCounters())
    counters.push_back({c, {}, &st.batchesTracked});
  write(kModelFile, modelTensors, counters);
  if (!optimizerTensors.empty())
    write(kOptimizerFile, optimizerTensors);

  json j = {{"format", "ampc-train-state"},
            {"version", 1},
            {"model", model.name()},
            {"config", configToJson(model.config())},
            {"iteration", st.iteration},
            {"optimizer_step", model.optimizerStep()},
            {"scaler",
             {{"scale", sc.scale},
              {"growth_tracker", sc.growthTracker},
              {"hysteresis_left", sc.hysteresisLeft},
              {"skipped_steps", sc.skippedSteps}}},
            {"data",
             {{"epoch", st.epoch},
              {"batch_in_epoch", st.batchInEpoch},
              {"num_samples", st.numSamples},
              {"batch_size", st.batchSize},
              {"world_size", st.worldSize},
              {"shuffle", st.shuffle}}},
            {"seed", st.seed},
            {"hyper", hyperToJson(st.hyper)},
            {"last_loss", st.lastLoss},
            {"batches_tracked", st.batchesTracked},
            {"tensors", shapes},
            {"files", files}};
  writeFileSynced((tmp / "train_state.json").string(), j.dump(2) + "\n");
  syncDirectory(tmp.string());

  fs::remove_all(final, ec); // a rerun over an old checkpoint of this step
  fs::rename(tmp, final, ec);
  if (ec)
    fail(final.string(), "cannot rename checkpoint into place: " +
                             ec.message());
  syncDirectory(dir);
  writeFileAtomic((fs::path(dir) / "latest").string(), name + "\n");
  return final.string();
}

std::string resolveCheckpoint(const std::string &path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    fail(path, "no such checkpoint");
  fs::path p(path);
  if (!fs::is_directory(p, ec))
    p = p.parent_path();
  if (fs::exists(p / "train_state.json", ec))
    return p.string();
  if (fs::exists(p / "latest", ec)) {
    std::vector<uint8_t> b = data::readFileBytes((p / "latest").string());
    std::string name(b.begin(), b.end());
    while (!name.empty() && (name.back() == '\n' || name.back() == ' '))
      name.pop_back();
    if (name.empty() || name == "." || name == ".." ||
        name.find('/') != std::string::npos)
      fail((p / "latest").string(),
           "does not name a checkpoint directory: '" + name + "'");
    fs::path c = p / name;
    if (!fs::exists(c / "train_state.json", ec))
      fail((p / "latest").string(), "points at '" + name +
                                        "', which holds no train_state.json");
    return c.string();
  }
  fail(path, "no checkpoint here (no train_state.json or latest)");
}

// ---- Reading train_state.json back: every field checked ----------------

namespace {

// Integers a double holds exactly: the counters' ceiling.
constexpr int64_t kMaxCount = (int64_t(1) << 53) - 1;

std::string str(const json &v) {
  std::string s = v.dump();
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return s;
}

std::string str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// train_state.json, read field by field; bad() ends with one line naming
// the field: `PATH: field "data.epoch": must be >= 0 (got -1)`.
class StateReader {
public:
  explicit StateReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void bad(const std::string &field,
                        const std::string &why) const {
    fail(path_, "field \"" + field + "\": " + why);
  }
  [[noreturn]] void bad(const std::string &field, const std::string &why,
                        const json &got) const {
    bad(field, why + " (got " + str(got) + ")");
  }

  // |parent|'s |key| (|field| in full), or nullptr when absent.
  const json *find(const json &parent, const std::string &key) const {
    auto it = parent.find(key);
    return it == parent.end() ? nullptr : &*it;
  }
  const json &need(const json &parent, const std::string &field,
                   const std::string &key) const {
    if (const json *v = find(parent, key))
      return *v;
    bad(field, "missing");
  }
  const json &object(const json &parent, const std::string &field,
                     const std::string &key) const {
    const json &v = need(parent, field, key);
    if (!v.is_object())
      bad(field, "must be an object", v);
    return v;
  }

  // An integer in [lo, hi]; |why| explains hi.
  int64_t integer(const json &v, const std::string &field, int64_t lo,
                  int64_t hi, const std::string &why = "") const {
    if (!v.is_number_integer())
      bad(field, "must be an integer", v);
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      bad(field, "must be <= " + std::to_string(hi) + why, v);
    int64_t x = v.get<int64_t>();
    if (x < lo)
      bad(field, "must be >= " + std::to_string(lo), v);
    if (x > hi)
      bad(field, "must be <= " + std::to_string(hi) + why, v);
    return x;
  }
  int64_t integer(const json &parent, const std::string &field,
                  const std::string &key, int64_t lo, int64_t hi,
                  const std::string &why = "") const {
    return integer(need(parent, field, key), field, lo, hi, why);
  }

  // A number a float holds, finite (JSON has no inf or NaN: nlohmann
  // writes them as null).
  float f32(const json &v, const std::string &field) const {
    if (!v.is_number())
      bad(field, "must be a number", v);
    double x = v.get<double>();
    if (!std::isfinite(x) || std::fabs(x) > double(FLT_MAX))
      bad(field, "must be a finite float", v);
    return float(x);
  }

  template <class T> T hyper(const json &v, const std::string &field) const {
    if constexpr (std::is_same_v<T, float>)
      return f32(v, field);
    else
      return T(integer(v, field, std::numeric_limits<T>::min(),
                       std::numeric_limits<T>::max()));
  }

private:
  std::string path_;
};

} // namespace

std::string checkHyper(const Hyper &h, std::string *name) {
  std::string problem;
#define AMPC_HYPER(NAME, FIELD, TYPE, DFLT, HELP)                              \
  if (problem.empty()) {                                                       \
    problem = hyperRule(#NAME, double(h.FIELD));                               \
    if (!problem.empty()) {                                                    \
      *name = #NAME;                                                           \
      problem += " (got " + str(double(h.FIELD)) + ")";                        \
    }                                                                          \
  }
#include "runtime/HyperParams.def"
  if (problem.empty() && h.minScale > h.maxScale) {
    *name = "min_scale";
    problem = "must be <= max_scale " + str(h.maxScale) + " (got " +
              str(h.minScale) + ")";
  }
  return problem;
}

TrainState readTrainState(const std::string &ckpt, const Model &model) {
  std::string statePath = (fs::path(ckpt) / "train_state.json").string();
  std::vector<uint8_t> b = data::readFileBytes(statePath);
  json j;
  try {
    j = json::parse(b.begin(), b.end());
  } catch (const nlohmann::json::exception &e) {
    fail(statePath, std::string("bad train state: ") + e.what());
  }
  StateReader r(statePath);
  if (!j.is_object() || !j.contains("format") ||
      j["format"] != "ampc-train-state")
    fail(statePath, "not an ampc train state");
  if (const json *v = r.find(j, "version"))
    r.integer(*v, "version", 1, 1, ", the version this ampc reads");
  const json &name = r.need(j, "model", "model");
  if (!name.is_string())
    r.bad("model", "must be a string", name);
  if (name != model.name())
    fail(statePath, "checkpoint is of model '" + name.get<std::string>() +
                        "', this binary trains '" + model.name() + "'");
  if (const json *c = r.find(j, "config")) {
    if (!c->is_object())
      r.bad("config", "must be an object", *c);
    if (*c != configToJson(model.config()))
      std::cerr << "note: " << statePath << ": written with compile config "
                << c->dump() << ", this binary has "
                << configToJson(model.config()).dump() << "\n";
  }

  TrainState st;
  // Counters: every iteration either took an optimizer step or was skipped.
  st.iteration = r.integer(j, "iteration", "iteration", 0, kMaxCount);
  st.optimizerStep = r.integer(j, "optimizer_step", "optimizer_step", 0,
                               st.iteration, ", the iteration");

  // Hyper-parameters: one key per row of HyperParams.def. A key missing
  // (written before the row was added) takes the model's default.
  const json &jh = r.object(j, "hyper", "hyper");
  const Hyper dflt = model.defaults();
#define AMPC_HYPER(NAME, FIELD, TYPE, DFLT, HELP)                              \
  {                                                                            \
    const json *v = r.find(jh, #NAME);                                         \
    if (!v && std::string_view(#NAME) == "clip_norm")                          \
      v = r.find(jh, "max_norm"); /* its name before the rename */             \
    if (v) {                                                                   \
      st.hyper.FIELD = r.hyper<TYPE>(*v, "hyper." #NAME);                      \
    } else {                                                                   \
      st.hyper.FIELD = dflt.FIELD;                                             \
      std::cerr << "note: " << statePath << ": no hyper." #NAME                \
                << " (an older checkpoint): the model's default "              \
                << str(double(dflt.FIELD)) << "\n";                            \
    }                                                                          \
  }
#include "runtime/HyperParams.def"
  std::string hyperName;
  std::string problem = checkHyper(st.hyper, &hyperName);
  if (!problem.empty())
    r.bad("hyper." + hyperName, problem);

  const json &js = r.object(j, "scaler", "scaler");
  ScalerState &sc = st.scaler;
  const json &scale = r.need(js, "scaler.scale", "scale");
  sc.scale = r.f32(scale, "scaler.scale");
  if (!(sc.scale > 0))
    r.bad("scaler.scale", "must be > 0", scale);
  sc.growthTracker = int32_t(r.integer(
      js, "scaler.growth_tracker", "growth_tracker", 0,
      st.hyper.growthInterval - 1,
      ", below hyper.growth_interval " +
          std::to_string(st.hyper.growthInterval)));
  sc.hysteresisLeft = int32_t(r.integer(
      js, "scaler.hysteresis_left", "hysteresis_left", 0,
      st.hyper.hysteresis,
      ", hyper.hysteresis"));
  sc.skippedSteps = r.integer(js, "scaler.skipped_steps", "skipped_steps", 0,
                              st.iteration, ", the iteration");
  if (st.optimizerStep + sc.skippedSteps != st.iteration)
    r.bad("iteration",
          "must equal optimizer_step + scaler.skipped_steps = " +
              std::to_string(st.optimizerStep + sc.skippedSteps),
          j["iteration"]);

  // The data position, in global batches of the data it was trained on.
  const json &jd = r.object(j, "data", "data");
  st.numSamples = r.integer(jd, "data.num_samples", "num_samples", 1,
                            kMaxCount);
  st.batchSize = r.integer(jd, "data.batch_size", "batch_size", 1,
                           st.numSamples, ", data.num_samples");
  if (const json *w = r.find(jd, "world_size")) {
    st.worldSize = r.integer(*w, "data.world_size", 1, st.batchSize,
                             ", data.batch_size");
    if (st.batchSize % st.worldSize)
      r.bad("data.world_size",
            "must divide data.batch_size " + std::to_string(st.batchSize),
            *w);
  } else {
    st.worldSize = 1; // written before it was recorded
  }
  if (const json *v = r.find(jd, "shuffle")) {
    if (!v->is_boolean())
      r.bad("data.shuffle", "must be true or false", *v);
    st.shuffle = v->get<bool>();
  }
  const int64_t perEpoch = st.numSamples / st.batchSize;
  st.epoch = r.integer(jd, "data.epoch", "epoch", 0, kMaxCount);
  // == perEpoch: the epoch's last batch was taken, the next one starts the
  // next epoch.
  st.batchInEpoch = r.integer(
      jd, "data.batch_in_epoch", "batch_in_epoch", 0, perEpoch,
      ", the batches per epoch of " + std::to_string(st.numSamples) +
          " samples in global batches of " + std::to_string(st.batchSize));

  const json &seed = r.need(j, "seed", "seed");
  if (!seed.is_number_integer())
    r.bad("seed", "must be an integer", seed);
  if (!seed.is_number_unsigned() && seed.get<int64_t>() < 0)
    r.bad("seed", "must be >= 0", seed);
  st.seed = seed.get<uint64_t>();

  if (const json *v = r.find(j, "last_loss")) {
    if (v->is_number())
      st.lastLoss = r.f32(*v, "last_loss");
    else if (!v->is_null()) // a non-finite loss was written as null
      r.bad("last_loss", "must be a number or null", *v);
  }

  // Absent (written before it was recorded): every step ran accum forwards.
  if (const json *b = r.find(j, "batches_tracked"))
    st.batchesTracked = r.integer(*b, "batches_tracked", 0, kMaxCount);
  else
    st.batchesTracked =
        st.iteration * std::max(1, model.config().accumSteps);

  if (const json *t = r.find(j, "tensors")) {
    if (!t->is_object())
      r.bad("tensors", "must be an object", *t);
    std::map<std::string, std::vector<int64_t>> shapes;
    for (auto &[k, v] : t->items()) {
      std::string field = "tensors." + k;
      if (!v.is_array())
        r.bad(field, "must be an array of dimensions", v);
      for (const json &d : v)
        shapes[k].push_back(r.integer(d, field, 0, kMaxCount));
      shapes.try_emplace(k); // a scalar
    }
    st.tensorShapes = std::move(shapes);
  }

  // Written since checksums were recorded; absent: nothing to verify.
  if (const json *f = r.find(j, "files")) {
    if (!f->is_object())
      r.bad("files", "must be an object", *f);
    for (auto &[k, v] : f->items()) {
      std::string field = "files." + k;
      if (k.empty() || k == "." || k == ".." ||
          k.find('/') != std::string::npos || k == "train_state.json")
        r.bad("files", "names a file outside the checkpoint: " + json(k).dump());
      if (!v.is_object())
        r.bad(field, "must be an object", v);
      TrainState::FileSum s;
      s.name = k;
      s.bytes = uint64_t(r.integer(v, field + ".bytes", "bytes", 0,
                                   std::numeric_limits<int64_t>::max()));
      const json &crc = r.need(v, field + ".crc32", "crc32");
      std::string hex = crc.is_string() ? crc.get<std::string>() : "";
      if (hex.size() != 8 ||
          hex.find_first_not_of("0123456789abcdef") != std::string::npos)
        r.bad(field + ".crc32", "must be 8 lowercase hex digits", crc);
      s.crc32 = uint32_t(std::stoul(hex, nullptr, 16));
      st.files.push_back(std::move(s));
    }
    if (!f->contains("model.safetensors"))
      r.bad("files", "has no entry for model.safetensors");
  }
  return st;
}

void checkResumedScaler(const std::string &ckpt, const TrainState &st,
                        const Hyper &h) {
  StateReader r((fs::path(ckpt) / "train_state.json").string());
  if (st.scaler.growthTracker >= h.growthInterval)
    r.bad("scaler.growth_tracker",
          "must be < this run's --growth-interval " +
              std::to_string(h.growthInterval),
          st.scaler.growthTracker);
  if (st.scaler.hysteresisLeft > h.hysteresis)
    r.bad("scaler.hysteresis_left",
          "must be <= this run's --hysteresis " + std::to_string(h.hysteresis),
          st.scaler.hysteresisLeft);
}

// Reads a checkpoint file, checking the size and CRC-32 recorded of it.
static std::vector<uint8_t> readVerified(const std::string &ckpt,
                                         const std::string &name,
                                         const TrainState &st) {
  std::string path = (fs::path(ckpt) / name).string();
  std::vector<uint8_t> b = data::readFileBytes(path);
  for (const TrainState::FileSum &s : st.files) {
    if (s.name != name)
      continue;
    if (b.size() != s.bytes)
      fail(path, "corrupt: " + std::to_string(b.size()) +
                     " bytes, train_state.json records " +
                     std::to_string(s.bytes));
    uint32_t crc = crc32Of(b.data(), b.size());
    if (crc != s.crc32)
      fail(path, "corrupt: CRC-32 " + hex8(crc) + ", train_state.json " +
                     "records " + hex8(s.crc32));
  }
  return b;
}

[[noreturn]] static void missingOptimizerFile(const std::string &ckpt,
                                              const std::string &why) {
  fail((fs::path(ckpt) / kOptimizerFile).string(),
       "missing: the checkpoint's optimizer state" + why +
           "; to start from its weights with a fresh optimizer, use "
           "--init-weights " +
           (fs::path(ckpt) / kModelFile).string());
}

// A checkpoint file's tensors, checked against the state tensors that
// belong in it (presence, shape, nothing unexpected) and against the step
// train_state.json is at.
static SafetensorsFile readStateFile(const std::string &ckpt,
                                     const std::string &name,
                                     const TrainState &st,
                                     const std::vector<const StateTensor *> &want) {
  std::string path = (fs::path(ckpt) / name).string();
  SafetensorsFile f = decodeSafetensors(path, readVerified(ckpt, name, st));
  for (const StateTensor *t : want) {
    auto it = f.tensors.find(t->name);
    if (it == f.tensors.end() && t->optimizer && name == kModelFile)
      missingOptimizerFile(ckpt, "");
    if (it == f.tensors.end())
      fail(path, "missing tensor '" + t->name + "'");
    if (it->second.shape != t->shape)
      fail(path, "tensor '" + t->name + "' has shape " +
                     json(it->second.shape).dump() + ", the model's is " +
                     json(t->shape).dump());
  }
  if (f.tensors.size() != want.size())
    for (auto &[tensor, t] : f.tensors) {
      bool known = false;
      for (const StateTensor *s : want)
        known |= s->name == tensor;
      if (!known)
        fail(path, "unexpected tensor '" + tensor +
                       "' (not part of this model" +
                       (name == kModelFile ? "'s state_dict)" : ")"));
    }
  // The files are of the same checkpoint.
  auto metaDiffers = [&](const char *key, int64_t value) {
    auto it = f.metadata.find(key);
    return it != f.metadata.end() && it->second != std::to_string(value);
  };
  if (metaDiffers("step", st.iteration) ||
      metaDiffers("optimizer_step", st.optimizerStep))
    fail(path, "written at step " + f.metadata["step"] + " (optimizer step " +
                   f.metadata["optimizer_step"] +
                   "), train_state.json is at iteration " +
                   std::to_string(st.iteration) + " (optimizer step " +
                   std::to_string(st.optimizerStep) + ")");
  return f;
}

void restoreCheckpoint(const std::string &ckpt, Model &model,
                       const TrainState &st) {
  for (const TrainState::FileSum &s : st.files)
    if (s.name != kModelFile && s.name != kOptimizerFile)
      readVerified(ckpt, s.name, st);
  auto state = model.stateTensors();
  std::vector<const StateTensor *> modelState, optimizerState;
  for (const StateTensor &t : state)
    (t.optimizer ? optimizerState : modelState).push_back(&t);
  // A checkpoint from before the split holds everything in model.safetensors
  // and lists no optimizer.safetensors.
  std::error_code ec;
  bool split = fs::exists(fs::path(ckpt) / kOptimizerFile, ec) ||
               std::any_of(st.files.begin(), st.files.end(),
                           [](const TrainState::FileSum &s) {
                             return s.name == kOptimizerFile;
                           });
  if (!optimizerState.empty() && split &&
      !fs::exists(fs::path(ckpt) / kOptimizerFile, ec))
    missingOptimizerFile(ckpt, " (train_state.json lists it)");
  std::vector<const StateTensor *> inModelFile = modelState;
  if (!split)
    inModelFile.insert(inModelFile.end(), optimizerState.begin(),
                       optimizerState.end());
  std::map<std::string, const LoadedTensor *> loaded;
  SafetensorsFile mf = readStateFile(ckpt, kModelFile, st, inModelFile);
  for (auto &[name, t] : mf.tensors)
    loaded[name] = &t;
  SafetensorsFile of;
  if (split && !optimizerState.empty()) {
    of = readStateFile(ckpt, kOptimizerFile, st, optimizerState);
    for (auto &[name, t] : of.tensors)
      loaded[name] = &t;
  }
  if (st.tensorShapes) {
    StateReader r((fs::path(ckpt) / "train_state.json").string());
    for (const StateTensor &t : state) {
      auto it = st.tensorShapes->find(t.name);
      if (it == st.tensorShapes->end())
        r.bad("tensors", "has no entry for '" + t.name + "'");
      if (it->second != t.shape)
        r.bad("tensors." + t.name,
              "must be " + json(t.shape).dump() + ", the model's",
              json(it->second));
    }
    if (st.tensorShapes->size() != state.size())
      r.bad("tensors", "lists " + std::to_string(st.tensorShapes->size()) +
                           " tensors, the model has " +
                           std::to_string(state.size()));
  }
  for (const StateTensor &t : state) {
    const LoadedTensor &l = *loaded.at(t.name);
    std::copy(l.data.begin(), l.data.end(), t.data);
  }
  model.scaler() = st.scaler;
  model.optimizerStep() = st.optimizerStep;
}

} // namespace ampc::rt
