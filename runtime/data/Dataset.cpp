//===- Dataset.cpp - Loading, converting and batching model inputs -------===//
#include "runtime/data/Dataset.h"
#include "runtime/data/DataError.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace ampc::rt::data {

std::vector<DataSpec> parseDataSpecs(const std::vector<std::string> &items,
                                     const std::string &flag) {
  std::vector<DataSpec> specs;
  for (const std::string &item : items) {
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      fail(flag, "expected NAME=PATH, got '" + item + "'");
    DataSpec s;
    s.input = item.substr(0, eq);
    s.path = item.substr(eq + 1);
    size_t colon = s.path.rfind(':');
    if (colon != std::string::npos) {
      std::string t = s.path.substr(colon + 1);
      static const std::pair<const char *, Elem> kTok[] = {
          {"u8", Elem::U8}, {"u16", Elem::U16}, {"i32", Elem::I32},
          {"u32", Elem::U32}};
      bool known = false;
      for (auto &[name, e] : kTok)
        if (t == name) {
          s.tokenType = e;
          known = true;
        }
      if (known)
        s.path.resize(colon);
    }
    for (const DataSpec &o : specs)
      if (o.input == s.input)
        fail(flag, "input '" + s.input + "' given twice");
    specs.push_back(s);
  }
  return specs;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  }
  return "?";
}

static bool isIntDType(DType t) { return t == DType::I32 || t == DType::I64; }

static std::string shapeString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string describeInput(const TensorInfo &t) {
  return t.name + " " + dtypeName(t.dtype) + shapeString(t.shape);
}

int64_t perSampleCount(const TensorInfo &t) {
  int64_t n = 1;
  for (size_t i = 1; i < t.shape.size(); ++i)
    n *= t.shape[i];
  return n;
}

// Element |i| of integer data |a|, exactly (a double rounds past 2^53).
static std::string integerText(const Array &a, int64_t i) {
  if (a.elem == Elem::U64 || a.elem == Elem::I64) {
    uint64_t r;
    std::memcpy(&r, a.bytes.data() + 8 * i, 8);
    return a.elem == Elem::U64 ? std::to_string(r)
                               : std::to_string(int64_t(r));
  }
  return std::to_string(int64_t(elemAt(a.elem, a.bytes.data(), i)));
}

// Converts |count| elements of |a| starting at element |first| into |out| in
// |in|'s dtype.
static void convert(const Array &a, int64_t first, int64_t count,
                    const TensorInfo &in, uint8_t *out) {
  const uint8_t *src = a.bytes.data();
  bool scale = a.fromIdxBytes && !isIntDType(in.dtype);
  for (int64_t i = 0; i < count; ++i) {
    double v = elemAt(a.elem, src, first + i);
    switch (in.dtype) {
    case DType::F32: {
      float f = scale ? float(v) / 255.0f : float(v);
      std::memcpy(out + 4 * i, &f, 4);
      break;
    }
    case DType::F16: {
      num::half h = scale ? num::half(float(v) / 255.0f) : num::roundToHalf(v);
      std::memcpy(out + 2 * i, &h, 2);
      break;
    }
    case DType::BF16: {
      num::bf16 b = scale ? num::bf16(float(v) / 255.0f) : num::roundToBF16(v);
      std::memcpy(out + 2 * i, &b.bits, 2);
      break;
    }
    case DType::I32: {
      if (v < -2147483648.0 || v > 2147483647.0)
        fail(a.file, "value " + integerText(a, first + i) +
                         " does not fit input '" + in.name + "' (i32)");
      int32_t x = int32_t(v);
      std::memcpy(out + 4 * i, &x, 4);
      break;
    }
    case DType::I64: {
      int64_t x = (a.elem == Elem::I64 || a.elem == Elem::U64)
                      ? [&] {
                          int64_t r;
                          std::memcpy(&r, src + 8 * (first + i), 8);
                          return r;
                        }()
                      : int64_t(v);
      // u64 data past 2^63 - 1 would be read as a negative value.
      if (a.elem == Elem::U64 && x < 0)
        fail(a.file, "value " + integerText(a, first + i) +
                         " does not fit input '" + in.name + "' (i64)");
      std::memcpy(out + 8 * i, &x, 8);
      break;
    }
    }
  }
}

// Rejects the first value of integer input |in| outside what its consumers
// accept (TensorInfo::valueBound), naming |file| and the sample: a kernel
// would catch it later but could not say which file it came from.
static void checkValues(const std::vector<uint8_t> &values,
                        const TensorInfo &in, int64_t per,
                        const std::string &file) {
  if (in.valueBound <= 0 || !isIntDType(in.dtype))
    return;
  int64_t count = int64_t(values.size() / dtypeSize(in.dtype));
  for (int64_t k = 0; k < count; ++k) {
    int64_t v;
    if (in.dtype == DType::I32) {
      int32_t x;
      std::memcpy(&x, values.data() + 4 * k, 4);
      v = x;
    } else {
      std::memcpy(&v, values.data() + 8 * k, 8);
    }
    if ((v >= 0 && v < in.valueBound) || (in.ignoreValue && v == *in.ignoreValue))
      continue;
    fail(file, "value " + std::to_string(v) + " at sample " +
                   std::to_string(per > 0 ? k / per : 0) + " is outside [0, " +
                   std::to_string(in.valueBound) + ")" +
                   (in.boundBy.empty() ? "" : " (" + in.boundBy + ")"));
  }
}

static bool isTargetName(const std::string &n) {
  return n == "targets" || n == "target" || n == "labels";
}

Dataset loadDataset(const std::vector<TensorInfo> &inputs,
                    const std::vector<DataSpec> &specs, int64_t context,
                    const std::string &flag) {
  std::string inputList;
  for (const TensorInfo &t : inputs)
    inputList += (inputList.empty() ? "" : ", ") + describeInput(t);

  std::map<std::string, const DataSpec *> byName;
  for (const DataSpec &s : specs) {
    bool found = false;
    for (const TensorInfo &t : inputs)
      found |= t.name == s.input;
    if (!found)
      fail(flag, "the model has no input '" + s.input + "' (inputs: " +
                     inputList + ")");
    byName[s.input] = &s;
  }

  // Which inputs get shifted targets from which token input.
  std::map<std::string, std::string> shiftedFrom;
  for (const TensorInfo &t : inputs) {
    auto it = byName.find(t.name);
    if (it == byName.end() || detectFormat(it->second->path) != Format::Tokens)
      continue;
    for (const TensorInfo &u : inputs)
      if (&u != &t && isTargetName(u.name) && !byName.count(u.name) &&
          isIntDType(u.dtype) && u.shape == t.shape) {
        if (shiftedFrom.count(u.name))
          fail(flag, "input '" + u.name + "' could take shifted targets from "
                     "both '" + shiftedFrom[u.name] + "' and '" + t.name +
                     "'; give it its own --data");
        shiftedFrom[u.name] = t.name;
      }
  }

  Dataset ds;
  ds.inputs.resize(inputs.size());
  ds.sampleBytes.resize(inputs.size());
  std::string firstFile;
  std::map<std::string, Array> tokenArrays; // by input name
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo &in = inputs[i];
    int64_t per = perSampleCount(in);
    ds.sampleBytes[i] = per * int64_t(dtypeSize(in.dtype));
    const DataSpec *spec = nullptr;
    int64_t shift = 0;
    if (auto it = byName.find(in.name); it != byName.end()) {
      spec = it->second;
    } else if (auto it = shiftedFrom.find(in.name); it != shiftedFrom.end()) {
      spec = byName[it->second];
      shift = 1;
    } else {
      fail(flag, "no data for input '" + describeInput(in) +
                     "' (inputs: " + inputList + ")");
    }
    const std::string &path = spec->path;
    Format fmt = detectFormat(path);
    int64_t n;
    if (fmt == Format::Tokens) {
      if (!isIntDType(in.dtype))
        fail(path, "token file for non-integer input '" + describeInput(in) +
                       "'");
      if (in.shape.size() != 2)
        fail(path, "token file for input '" + describeInput(in) +
                       "': token inputs are [batch, context]");
      int64_t T = in.shape[1];
      if (context > 0 && context != T)
        fail(path, "--context=" + std::to_string(context) + " but input '" +
                       in.name + "' was compiled with context " +
                       std::to_string(T) + " (recompile to change it)");
      auto cached = tokenArrays.find(path);
      if (cached == tokenArrays.end())
        cached = tokenArrays.emplace(path, readTokens(path, spec->tokenType))
                     .first;
      const Array &a = cached->second;
      int64_t L = a.shape[0];
      n = L > 0 ? (L - 1) / T : 0;
      ds.inputs[i].resize(size_t(n * ds.sampleBytes[i]));
      for (int64_t s = 0; s < n; ++s)
        convert(a, s * T + shift, T, in,
                ds.inputs[i].data() + s * ds.sampleBytes[i]);
      ds.tokensPerSample = T;
    } else {
      Array a = fmt == Format::Npy ? readNpy(path) : readIdx(path);
      int64_t fileCount = 1;
      for (size_t d = 1; d < a.shape.size(); ++d)
        fileCount *= a.shape[d];
      if (fileCount != per)
        fail(path, "wrong per-sample shape: samples are " +
                       shapeString(std::span(a.shape).subspan(1)) + " (" +
                       std::to_string(fileCount) + " elements), input '" +
                       describeInput(in) + "' needs " + std::to_string(per));
      if (isFloatElem(a.elem) && isIntDType(in.dtype))
        fail(path, std::string("wrong dtype: ") + elemName(a.elem) +
                       " data for integer input '" + describeInput(in) + "'");
      n = a.shape[0];
      ds.inputs[i].resize(size_t(n * ds.sampleBytes[i]));
      convert(a, 0, n * per, in, ds.inputs[i].data());
    }
    checkValues(ds.inputs[i], in, per, path);
    if (i == 0 || firstFile.empty()) {
      ds.numSamples = n;
      firstFile = path;
    } else if (n != ds.numSamples) {
      fail(path, "sample count mismatch: " + std::to_string(n) +
                     " samples for input '" + in.name + "', but " + firstFile +
                     " has " + std::to_string(ds.numSamples));
    }
  }
  if (!inputs.empty()) {
    int64_t batch = inputs[0].shape.empty() ? 1 : inputs[0].shape[0];
    // Evaluation pads a partial batch (runtime/train/Evaluate.h); training
    // needs one whole batch.
    if (flag == "--eval" && ds.numSamples < 1)
      fail(firstFile, "no samples");
    if (flag != "--eval" && ds.numSamples < batch)
      fail(firstFile, std::to_string(ds.numSamples) +
                          " samples, fewer than one batch of " +
                          std::to_string(batch));
  }
  return ds;
}

void Dataset::gather(std::span<const int64_t> indices,
                     std::vector<std::vector<uint8_t>> &batch) const {
  batch.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t sb = size_t(sampleBytes[i]);
    batch[i].resize(indices.size() * sb);
    for (size_t k = 0; k < indices.size(); ++k)
      std::memcpy(batch[i].data() + k * sb,
                  inputs[i].data() + size_t(indices[k]) * sb, sb);
  }
}

std::vector<int64_t> epochPermutation(int64_t n, uint64_t seed,
                                      int64_t epoch) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    p[size_t(i)] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    num::Philox4 r = num::philox4x32(
        {uint32_t(i), uint32_t(uint64_t(i) >> 32), uint32_t(epoch),
         0x53485546u /* "SHUF" */},
        seed);
    uint64_t bits = (uint64_t(r[0]) << 32) | r[1];
    // Unbiased enough for n < 2^32: multiply-shift into [0, i].
    int64_t j = int64_t((unsigned __int128)bits * uint64_t(i + 1) >> 64);
    std::swap(p[size_t(i)], p[size_t(j)]);
  }
  return p;
}

Batcher::Batcher(const Dataset &data, int64_t batchSize, uint64_t seed,
                 bool shuffle)
    : data_(data), batchSize_(batchSize),
      batchesPerEpoch_(batchSize > 0 ? data.numSamples / batchSize : 0),
      seed_(seed), shuffle_(shuffle), shardCount_(batchSize) {}

void Batcher::shard(int64_t offset, int64_t count) {
  shardOffset_ = offset;
  shardCount_ = count;
}

void Batcher::seek(int64_t epoch, int64_t batch) {
  // A position outside the data would index past it in next() (resumes
  // check the position first: this is the backstop).
  if (epoch < 0 || batch < 0 || batch > batchesPerEpoch_)
    fail("data position", "epoch " + std::to_string(epoch) + ", batch " +
                              std::to_string(batch) + " is outside [0, " +
                              std::to_string(batchesPerEpoch_) +
                              "] batches per epoch");
  epoch_ = epoch;
  batch_ = batch;
}

void Batcher::keepPartialBatch(int64_t ranks) {
  ranks_ = std::max<int64_t>(1, ranks);
  if (batchSize_ > 0 && data_.numSamples % batchSize_ >= ranks_)
    batchesPerEpoch_ = data_.numSamples / batchSize_ + 1;
}

int64_t Batcher::next(std::vector<std::vector<uint8_t>> &out) {
  if (batch_ >= batchesPerEpoch_) {
    ++epoch_;
    batch_ = 0;
  }
  if (permEpoch_ != epoch_) {
    if (shuffle_) {
      perm_ = epochPermutation(data_.numSamples, seed_, epoch_);
    } else {
      perm_.resize(size_t(data_.numSamples));
      for (int64_t i = 0; i < data_.numSamples; ++i)
        perm_[size_t(i)] = i;
    }
    permEpoch_ = epoch_;
  }
  const int64_t first = batch_ * batchSize_;
  if (first + batchSize_ > data_.numSamples) { // the kept partial batch
    const int64_t left = data_.numSamples - first;
    const int64_t rank = shardCount_ > 0 ? shardOffset_ / shardCount_ : 0;
    const int64_t real = left / ranks_ + (rank < left % ranks_ ? 1 : 0);
    const int64_t start =
        first + rank * (left / ranks_) + std::min(rank, left % ranks_);
    padded_.resize(size_t(shardCount_));
    for (int64_t k = 0; k < shardCount_; ++k)
      padded_[size_t(k)] = perm_[size_t(start + k % real)];
    data_.gather(padded_, out);
    ++batch_;
    return real;
  }
  data_.gather(std::span(perm_).subspan(size_t(first + shardOffset_),
                                        size_t(shardCount_)),
               out);
  ++batch_;
  return shardCount_;
}

} // namespace ampc::rt::data
