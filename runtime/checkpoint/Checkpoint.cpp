//===- Checkpoint.cpp - Saving and resuming training ---------------------===//
#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/checkpoint/AtomicFile.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/Array.h"
#include "runtime/data/DataError.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string_view>

namespace fs = std::filesystem;

namespace ampc::rt {

using json = nlohmann::ordered_json;

// One key per row of HyperParams.def, under its name.
static json hyperToJson(const Hyper &h) {
  json j = json::object();
#define AMPC_HYPER(name, field, type, dflt, help) j[#name] = h.field;
#include "runtime/HyperParams.def"
  return j;
}

// Checkpoints written before a setting was renamed keep loading.
static const json &hyperField(const json &j, const char *name) {
  if (!j.contains(name) && std::string_view(name) == "clip_norm" &&
      j.contains("max_norm"))
    return j.at("max_norm");
  return j.at(name);
}

// Settings added after checkpoints were first written: one without them
// keeps the default.
static bool addedLater(std::string_view name) {
  return name == "scale_floor" || name == "max_consecutive_skips";
}

static Hyper hyperFromJson(const json &j) {
  Hyper h;
#define AMPC_HYPER(name, field, type, dflt, help)                              \
  if (j.contains(#name) || !addedLater(#name))                                 \
    h.field = hyperField(j, #name).get<type>();
#include "runtime/HyperParams.def"
  return h;
}

static json configToJson(const CompileConfig &c) {
  return {{"target", c.target},         {"amp", c.amp},
          {"optimizer", c.optimizer},   {"loss_scale", c.lossScale},
          {"nesterov", c.nesterov},     {"clip_norm", c.clipNorm},
          {"clip_value", c.clipValue},  {"accum_steps", c.accumSteps}};
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

  std::vector<F32Tensor> tensors;
  json shapes = json::object();
  for (const StateTensor &t : model.stateTensors()) {
    tensors.push_back({t.name, t.shape, t.data});
    shapes[t.name] = t.shape;
  }
  const ScalerState &sc = model.scaler();
  std::map<std::string, std::string> meta = {
      {"format", "ampc"},
      {"model", model.name()},
      {"step", std::to_string(st.iteration)},
      {"optimizer_step", std::to_string(model.optimizerStep())}};
  writeFileSynced((tmp / "model.safetensors").string(),
                  encodeSafetensors(tensors, meta));

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
              {"world_size", st.worldSize}}},
            {"seed", st.seed},
            {"hyper", hyperToJson(st.hyper)},
            {"last_loss", st.lastLoss},
            {"tensors", shapes}};
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
    fs::path c = p / name;
    if (!fs::exists(c / "train_state.json", ec))
      fail((p / "latest").string(), "points at '" + name +
                                        "', which holds no train_state.json");
    return c.string();
  }
  fail(path, "no checkpoint here (no train_state.json or latest)");
}

TrainState readTrainState(const std::string &ckpt, const Model &model) {
  std::string statePath = (fs::path(ckpt) / "train_state.json").string();
  std::vector<uint8_t> b = data::readFileBytes(statePath);
  TrainState st;
  json j;
  try {
    j = json::parse(b.begin(), b.end());
    if (j.at("format") != "ampc-train-state")
      fail(statePath, "not an ampc train state");
    std::string name = j.at("model");
    if (name != model.name())
      fail(statePath, "checkpoint is of model '" + name +
                          "', this binary trains '" + model.name() + "'");
    if (j.at("config") != configToJson(model.config()))
      std::cerr << "note: " << statePath << ": written with compile config "
                << j.at("config").dump() << ", this binary has "
                << configToJson(model.config()).dump() << "\n";
    st.iteration = j.at("iteration");
    st.epoch = j.at("data").at("epoch");
    st.batchInEpoch = j.at("data").at("batch_in_epoch");
    st.numSamples = j.at("data").at("num_samples");
    st.batchSize = j.at("data").at("batch_size");
    st.worldSize = j.at("data").value("world_size", int64_t(1));
    st.seed = j.at("seed");
    st.hyper = hyperFromJson(j.at("hyper"));
    st.lastLoss = j.at("last_loss").is_number() ? float(j.at("last_loss"))
                                                : 0.0f;
    ScalerState &sc = st.scaler;
    const json &js = j.at("scaler");
    sc.scale = js.at("scale");
    sc.growthTracker = js.at("growth_tracker");
    sc.hysteresisLeft = js.at("hysteresis_left");
    sc.skippedSteps = js.at("skipped_steps");
    st.optimizerStep = j.at("optimizer_step");
  } catch (const nlohmann::json::exception &e) {
    fail(statePath, std::string("bad train state: ") + e.what());
  }
  return st;
}

void restoreCheckpoint(const std::string &ckpt, Model &model,
                       const TrainState &st) {
  std::string tensorPath = (fs::path(ckpt) / "model.safetensors").string();
  SafetensorsFile f = readSafetensors(tensorPath);
  auto state = model.stateTensors();
  for (const StateTensor &t : state) {
    auto it = f.tensors.find(t.name);
    if (it == f.tensors.end())
      fail(tensorPath, "missing tensor '" + t.name + "'");
    if (it->second.shape != t.shape)
      fail(tensorPath, "tensor '" + t.name + "' has shape " +
                           json(it->second.shape).dump() + ", the model's is " +
                           json(t.shape).dump());
  }
  if (f.tensors.size() != state.size())
    for (auto &[name, t] : f.tensors) {
      bool known = false;
      for (const StateTensor &s : state)
        known |= s.name == name;
      if (!known)
        fail(tensorPath, "unexpected tensor '" + name +
                             "' (not part of this model)");
    }
  for (const StateTensor &t : state) {
    const LoadedTensor &l = f.tensors.at(t.name);
    std::copy(l.data.begin(), l.data.end(), t.data);
  }
  model.scaler() = st.scaler;
  model.optimizerStep() = st.optimizerStep;
}

} // namespace ampc::rt
