//===- CpuEmitter.cpp - The C++ file: class, state, metadata, main() ------===//
#include "compiler/targets/cpu/CpuEmitter.h"
#include "compiler/targets/cpu/CpuEmitterImpl.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/TrainStep.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::cpu_emit;

namespace {

// Helpers every generated file starts with: the rounding at op boundaries
// and the scalar formulas the fused loops share with the kernel library.
constexpr const char *kPreamble = R"cpp(#include "runtime/Model.h"
#include "runtime/cpu/Epilogue.h"
#include "runtime/cpu/Kernels.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/Init.h"
#include "runtime/numerics/Philox.h"
#include "runtime/numerics/Scaler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace {

using ampc::cpu::TensorRef;
using ampc::num::bf16;
using ampc::num::half;
using ampc::rt::DType;

// Rounds a float to T and back: the boundary of every op in a fused loop,
// so fusion does not change the numbers.
template <typename T> inline float round(float x) { return float(T(x)); }
template <> inline float round<float>(float x) { return x; }

// Scalar formulas, as in the CPU kernel library.
constexpr float kSqrtHalf = 0.70710678118654752440f;
constexpr float kSqrt2OverPi = 0.79788456080286535588f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
constexpr float kKappa = 0.044715f;
inline float relu(float x) { return x > 0.0f || std::isnan(x) ? x : 0.0f; }
inline float gelu_erf(float x) {
  return 0.5f * x * (1.0f + std::erf(x * kSqrtHalf));
}
inline float gelu_tanh(float x) {
  float inner = kSqrt2OverPi * (x + kKappa * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(inner));
}
inline float gelu_erf_grad(float x, float g) {
  float cdf = 0.5f * (1.0f + std::erf(x * kSqrtHalf));
  float pdf = kInvSqrt2Pi * std::exp(-0.5f * x * x);
  return g * (cdf + x * pdf);
}
inline float gelu_tanh_grad(float x, float g) {
  float x2 = x * x;
  float inner = kSqrt2OverPi * (x + kKappa * x2 * x);
  float t = std::tanh(inner);
  float left = 0.5f * x, right = 1.0f + t;
  float dleft = 0.5f * right;
  float dright = left * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kKappa * x2);
  return g * (dleft + dright);
}

ampc::cpu::Kernel kernel(const char *name) {
  ampc::cpu::Kernel k = ampc::cpu::lookup(name);
  if (!k) {
    std::fprintf(stderr, "error: the CPU kernel library has no %s\n", name);
    std::exit(1);
  }
  return k;
}

// Calls a library kernel on arrays of operand and result references.
template <size_t N, size_t M>
void call(ampc::cpu::Kernel k, const TensorRef (&in)[N],
          const TensorRef (&out)[M], const ampc::cpu::Attrs &attrs) {
  k(std::span<const TensorRef>(in, N), std::span<const TensorRef>(out, M),
    attrs);
}

template <typename T> T *input(const void *p) {
  return static_cast<T *>(const_cast<void *>(p));
}

)cpp";

} // namespace

// Shared with the CUDA emitter (CpuEmitterImpl.h).
namespace ampc::cpu_emit {

std::string className(StringRef model) {
  std::string name;
  bool upper = true;
  for (char c : model) {
    if (!llvm::isAlnum(c)) {
      upper = true;
      continue;
    }
    name += upper ? llvm::toUpper(c) : c;
    upper = false;
  }
  if (name.empty() || llvm::isDigit(name[0]))
    name = "M" + name;
  return name + "Model";
}

std::string quoted(StringRef s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += '\\';
    q += c;
  }
  return q + "\"";
}

// ampc::num::InitAttrs fields of a #graph initializer, in declaration order
// (designated initializers).
std::string initAttrs(Attribute init) {
  std::string kind = "constant", fields;
  auto add = [&](StringRef field, std::string value) {
    fields += ", ." + field.str() + " = " + value;
  };
  auto real = [](double v) { return doubleLiteral(v); };
  TypeSwitch<Attribute>(init)
      .Case([&](graph::ZerosInitAttr) { kind = "zeros"; })
      .Case([&](graph::OnesInitAttr) { kind = "ones"; })
      .Case([&](graph::ConstantInitAttr a) {
        kind = "constant";
        add("value", real(a.getValue()));
      })
      .Case([&](graph::NormalInitAttr a) {
        kind = "normal";
        add("mean", real(a.getMean()));
        add("std", real(a.getStd()));
      })
      .Case([&](graph::UniformInitAttr a) {
        kind = "uniform";
        add("a", real(a.getA()));
        add("b", real(a.getB()));
      })
      .Case([&](graph::XavierUniformInitAttr a) {
        kind = "xavier_uniform";
        add("gain", real(a.getGain()));
      })
      .Case([&](graph::XavierNormalInitAttr a) {
        kind = "xavier_normal";
        add("gain", real(a.getGain()));
      })
      .Case([&](graph::KaimingUniformInitAttr a) {
        kind = "kaiming_uniform";
        add("a", real(a.getA()));
        add("mode", quoted(a.getMode()));
        add("nonlinearity", quoted(a.getNonlinearity()));
      })
      .Case([&](graph::KaimingNormalInitAttr a) {
        kind = "kaiming_normal";
        add("a", real(a.getA()));
        add("mode", quoted(a.getMode()));
        add("nonlinearity", quoted(a.getNonlinearity()));
      })
      .Case([&](graph::TruncNormalInitAttr a) {
        kind = "trunc_normal";
        add("mean", real(a.getMean()));
        add("std", real(a.getStd()));
        add("a", real(a.getA()));
        add("b", real(a.getB()));
      });
  return "ampc::num::InitAttrs{.kind = \"" + kind + "\"" + fields + "}";
}

LogicalResult collect(ModuleOp module, Program &p) {
  for (auto m : module.getOps<graph::ModelOp>())
    p.model = m;
  if (!p.model)
    return module.emitError() << "no graph.model to emit";
  StringRef name = p.model.getSymName();
  p.grad = module.lookupSymbol<func::FuncOp>((name + "_grad").str());
  p.step = module.lookupSymbol<func::FuncOp>((name + "_step").str());
  if (!p.grad || !p.step)
    return module.emitError() << "no @" << name << "_grad / @" << name
                              << "_step (run the training pipeline first)";
  p.step.walk([&](train::FusedEpilogueOp e) { p.epilogue = e; });
  Operation *unfused = nullptr;
  p.step.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "train" &&
        !isa<train::FusedEpilogueOp>(op))
      unfused = op;
  });
  if (!p.epilogue || unfused)
    return p.step.emitError()
           << "the CPU emitter needs one train.fused_epilogue in @"
           << p.step.getSymName() << " (run train-fuse-epilogue)";
  for (auto param : p.model.getBlock().getOps<graph::ParamOp>())
    p.paramNames.push_back(param.getName().str());
  return success();
}

int64_t arenaSize(Operation *op) {
  auto a = op->getAttrOfType<IntegerAttr>(kernel::kArenaSizeAttr);
  return a ? a.getInt() : 0;
}

} // namespace ampc::cpu_emit

namespace {

class FileEmitter {
public:
  FileEmitter(Program &p, raw_ostream &out, AsmState &state)
      : p(p), os(out), state(state) {}

  LogicalResult emit() {
    std::string cls = className(p.model.getSymName());
    auto config = p.step->getAttrOfType<DictionaryAttr>(kTrainConfigAttr);
    auto defaults = p.step->getAttrOfType<DictionaryAttr>(kTrainDefaultsAttr);
    if (!config || !defaults)
      return p.step.emitError() << "has no train.config / train.defaults";

    os << "// Generated by ampc for model @" << p.model.getSymName()
       << " (target cpu). Edits are lost when it is recompiled.\n";
    os << "// " << config << "\n";
    os << kPreamble;
    os << "class " << cls << " final : public ampc::rt::Model {\n";
    os << "public:\n";
    os.indent();
    emitConstructor(cls);
    emitMetadata(config, defaults);
    emitInitialize();
    if (failed(emitForwardBackward()))
      return failure();
    os << "float *grad(int param) override { return g_[param].data(); }\n";
    os << "float *lossAccumulator() override { return &lossAccumulator_; }\n";
    os << "void beginStep(int64_t iteration) { iteration_ = iteration; }\n";
    os << "void setDataShard(int rank, int) override { shard_ = rank; }\n\n";
    if (failed(emitStep(p, os)))
      return failure();
    os << "\n";
    if (failed(emitEvaluate()))
      return failure();
    emitState();
    os.unindent();
    emitMembers();
    os << "};\n\n} // namespace\n\n";
    os << "int main(int argc, char **argv) {\n"
       << "  static " << cls << " model;\n"
       << "  return ampc::rt::trainMain(argc, argv, model);\n"
       << "}\n";
    return success();
  }

private:
  Program &p;
  raw_indented_ostream os;
  AsmState &state;

  size_t numParams() const { return p.paramNames.size(); }
  bool sgd() const { return p.epilogue.getOptimizer() == "sgd"; }

  void emitConstructor(const std::string &cls) {
    os << cls << "() {\n";
    os.indent();
    os << "// Initializers resolved against each shape (fans, gains).\n";
    size_t i = 0;
    for (auto param : p.model.getBlock().getOps<graph::ParamOp>()) {
      auto t = cast<RankedTensorType>(param.getType());
      os << "addParam(" << quoted(param.getName()) << ", "
         << shapeList(t.getShape()) << ", " << initAttrs(param.getInit())
         << ");  // w_[" << i++ << "]\n";
    }
    int64_t arena =
        std::max(arenaSize(p.grad), arenaSize(p.model.getOperation()));
    auto noReuse = [](Operation *op) {
      auto a = op->getAttrOfType<IntegerAttr>(kernel::kArenaNoReuseAttr);
      return a ? a.getInt() : 0;
    };
    os << "// One arena for every intermediate tensor: " << arena
       << " bytes (" << std::max(noReuse(p.grad), noReuse(p.model))
       << " without reuse).\n";
    os << "arenaStorage_.resize(" << arena << " + 64);\n";
    os << "arena_ = reinterpret_cast<std::byte *>((reinterpret_cast<uintptr_t>("
          "arenaStorage_.data()) + 63) & ~uintptr_t(63));\n";
    os.unindent();
    os << "}\n\n";
  }

  void emitMetadata(DictionaryAttr config, DictionaryAttr defaults) {
    os << "const std::string &name() const override { return name_; }\n"
       << "const std::vector<ampc::rt::TensorInfo> &inputs() const override "
          "{ return inputs_; }\n"
       << "const std::vector<ampc::rt::ParamInfo> &params() const override "
          "{ return params_; }\n"
       << "const std::vector<ampc::rt::TensorInfo> &outputs() const override "
          "{ return outputs_; }\n"
       << "const ampc::rt::CompileConfig &config() const override { return "
          "config_; }\n\n";

    auto str = [&](StringRef key) {
      auto s = config.getAs<StringAttr>(key);
      return quoted(s ? s.getValue() : "");
    };
    auto flag = [&](StringRef key) {
      auto b = config.getAs<BoolAttr>(key);
      return b && b.getValue() ? "true" : "false";
    };
    auto accum = config.getAs<IntegerAttr>("accum_steps");
    configInit = "c.target = \"cpu\";\n  c.amp = " + str("amp") +
                 ";\n  c.optimizer = " + str("optimizer") +
                 ";\n  c.lossScale = " + str("loss_scale") +
                 ";\n  c.nesterov = " + flag("nesterov") +
                 ";\n  c.clipNorm = " + flag("clip_norm") +
                 ";\n  c.clipValue = " + flag("clip_value") +
                 ";\n  c.accumSteps = " +
                 std::to_string(accum ? accum.getInt() : 1) + ";";
    accumSteps = accum ? accum.getInt() : 1;

    // Hyper's fields by their snake-case names in train.defaults.
    static const std::pair<const char *, const char *> fields[] = {
        {"lr", "lr"},
        {"momentum", "momentum"},
        {"dampening", "dampening"},
        {"beta1", "beta1"},
        {"beta2", "beta2"},
        {"eps", "eps"},
        {"weight_decay", "weightDecay"},
        {"max_norm", "maxNorm"},
        {"clip_value", "clipValue"},
        {"init_scale", "initScale"},
        {"growth_factor", "growthFactor"},
        {"backoff_factor", "backoffFactor"},
        {"growth_interval", "growthInterval"},
        {"hysteresis", "hysteresis"},
        {"min_scale", "minScale"},
        {"max_scale", "maxScale"}};
    os << "ampc::rt::Hyper defaults() const override {\n";
    os.indent();
    os << "ampc::rt::Hyper h;  // compiled-in defaults; runtime flags "
          "override them\n";
    for (auto [key, field] : fields) {
      Attribute a = defaults.get(key);
      if (auto f = dyn_cast_or_null<FloatAttr>(a))
        os << "h." << field << " = "
           << floatLiteral(float(f.getValueAsDouble())) << ";\n";
      else if (auto i = dyn_cast_or_null<IntegerAttr>(a))
        os << "h." << field << " = " << i.getInt() << ";\n";
    }
    os << "return h;\n";
    os.unindent();
    os << "}\n\n";
  }

  void emitInitialize() {
    bool none = p.epilogue.getLossScale() == "none";
    os << "void initialize(uint64_t seed, const ampc::rt::Hyper &hyper) "
          "override {\n";
    os.indent();
    os << "seed_ = seed;\n"
       << "for (int p = 0; p < kNumParams; ++p) {\n"
       << "  ampc::num::fillInit(params_[p].init, seed, "
          "ampc::num::streamId(params_[p].name), w_[p]);\n"
       << "  std::fill(g_[p].begin(), g_[p].end(), 0.0f);\n"
       << "  std::fill(m_[p].begin(), m_[p].end(), 0.0f);\n";
    if (!sgd())
      os << "  std::fill(v_[p].begin(), v_[p].end(), 0.0f);\n";
    os << "}\n"
       << "step_ = 0;\n"
       << "iteration_ = 0;\n"
       << "lossAccumulator_ = 0.0f;\n"
       << "scaler_ = ampc::rt::ScalerState{};\n"
       << "scaler_.scale = " << (none ? "1.0f;  // no loss scaling" : "hyper.initScale;")
       << "\n"
       << "scaler_.hysteresisLeft = hyper.hysteresis;\n";
    os.unindent();
    os << "}\n\n";
  }

  LogicalResult emitForwardBackward() {
    BlockEnv env;
    env.asmState = &state;
    env.training = true;
    env.dropoutStep = "int64_t(iteration_ * " + std::to_string(accumSteps) +
                      " + micro)";
    reserve(env);
    func::FuncOp fn = p.grad;
    os << "// @" << fn.getSymName()
       << ": forward and backward of one micro-batch; gradients of loss * "
          "scale.\n";
    os << "void forwardBackward(const void *const *inputs, int micro) "
          "override {\n";
    os.indent();
    os << "std::byte *arena = arena_;\n";
    os << "float lossScale = scaler_.scale;\n";
    int inputIndex = 0;
    for (BlockArgument arg : fn.getArguments()) {
      unsigned i = arg.getArgNumber();
      std::string type = cppElementType(arg.getType());
      if (auto in = fn.getArgAttrOfType<StringAttr>(i, kGraphInputAttr)) {
        std::string name = env.fresh("in_" + in.getValue().str());
        os << type << " *" << name << " = input<" << type << ">(inputs["
           << inputIndex++ << "]);\n";
        env.names[arg] = name;
      } else if (auto pa = fn.getArgAttrOfType<StringAttr>(i, kGraphParamAttr)) {
        auto it = llvm::find(p.paramNames, pa.getValue().str());
        if (it == p.paramNames.end() || type != "float")
          return fn.emitError() << "argument " << i << ": unknown or non-FP32 "
                                   "parameter " << pa;
        std::string name = env.fresh("p_" + pa.getValue().str());
        os << "float *" << name << " = w_[" << (it - p.paramNames.begin())
           << "].data();\n";
        env.names[arg] = name;
      } else if (fn.getArgAttr(i, kGraphLossScaleAttr)) {
        env.names[arg] = "(&lossScale)";
      } else {
        return fn.emitError() << "argument " << i
                              << " is not an input, a parameter or the loss "
                                 "scale";
      }
    }
    os << "\n";
    if (failed(emitBlock(fn.getBody().front(), env, os)))
      return failure();
    os << "\n// Results: the loss (summed over micro-batches), gradients "
          "written or accumulated.\n";
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    bool sawLoss = false;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (auto o = fn.getResultAttrOfType<StringAttr>(i, kGraphOutputAttr)) {
        if (o.getValue() == "loss") {
          os << "lossAccumulator_ += float(" << env[v] << "[0]);\n";
          sawLoss = true;
        }
        continue;
      }
      auto g = fn.getResultAttrOfType<StringAttr>(i, kGraphGradAttr);
      auto it = g ? llvm::find(p.paramNames, g.getValue().str())
                  : p.paramNames.end();
      if (it == p.paramNames.end() || cppElementType(v.getType()) != "float")
        return fn.emitError() << "result " << i
                              << " is neither an output nor the FP32 "
                                 "gradient of a parameter";
      size_t idx = it - p.paramNames.begin();
      int64_t count = cast<RankedTensorType>(v.getType()).getNumElements();
      os << "accumulate(g_[" << idx << "].data(), " << env[v] << ", " << count
         << ", micro);  // " << g.getValue() << "\n";
    }
    if (!sawLoss)
      return fn.emitError() << "returns no output named \"loss\"";
    os.unindent();
    os << "}\n\n";
    return success();
  }

  LogicalResult emitEvaluate() {
    BlockEnv env;
    env.asmState = &state;
    env.training = false;
    reserve(env);
    os << "// @" << p.model.getSymName() << ": the forward pass (dropout off).\n";
    os << "void evaluate(const void *const *inputs, void *const *outputs) "
          "override {\n";
    os.indent();
    os << "std::byte *arena = arena_;\n";
    int in = 0, param = 0;
    for (Operation &op : p.model.getBlock()) {
      if (auto i = dyn_cast<graph::InputOp>(op)) {
        std::string type = cppElementType(i.getType());
        std::string name = env.fresh("in_" + i.getName().str());
        os << type << " *" << name << " = input<" << type << ">(inputs["
           << in++ << "]);\n";
        env.names[i.getResult()] = name;
      } else if (auto w = dyn_cast<graph::ParamOp>(op)) {
        std::string name = env.fresh("p_" + w.getName().str());
        os << "float *" << name << " = w_[" << param++ << "].data();\n";
        env.names[w.getResult()] = name;
      }
    }
    os << "\n";
    if (failed(emitBlock(p.model.getBlock(), env, os)))
      return failure();
    os << "\n";
    graph::OutputOp out = p.model.getOutputOp();
    for (auto [i, v] : llvm::enumerate(out.getValues()))
      os << "std::memcpy(outputs[" << i << "], " << env[v] << ", "
         << byteSize(v.getType()) << ");  // "
         << cast<StringAttr>(out.getNames()[i]).getValue() << "\n";
    os.unindent();
    os << "}\n\n";
    return success();
  }

  void emitState() {
    os << "std::vector<ampc::rt::StateTensor> stateTensors() override {\n";
    os.indent();
    os << "std::vector<ampc::rt::StateTensor> s;\n"
       << "for (int p = 0; p < kNumParams; ++p) {\n"
       << "  const std::string &n = params_[p].name;\n"
       << "  const std::vector<int64_t> &shape = params_[p].shape;\n"
       << "  s.push_back({n, shape, w_[p].data()});\n";
    if (sgd())
      os << "  s.push_back({n + \".momentum_buffer\", shape, m_[p].data()});\n";
    else
      os << "  s.push_back({n + \".exp_avg\", shape, m_[p].data()});\n"
         << "  s.push_back({n + \".exp_avg_sq\", shape, v_[p].data()});\n";
    os << "}\nreturn s;\n";
    os.unindent();
    os << "}\n"
       << "ampc::rt::ScalerState &scaler() override { return scaler_; }\n"
       << "int64_t &optimizerStep() override { return step_; }\n\n";
  }

  void emitMembers() {
    os << "private:\n";
    os.indent();
    os << "static constexpr int kNumParams = " << numParams() << ";\n\n";
    os << "void addParam(std::string name, std::vector<int64_t> shape, "
          "const ampc::num::InitAttrs &init) {\n"
       << "  int64_t n = 1;\n"
       << "  for (int64_t d : shape)\n"
       << "    n *= d;\n"
       << "  int p = int(params_.size());\n"
       << "  ampc::num::InitSpec spec = ampc::num::resolveInit(init, shape);\n"
       << "  params_.push_back({std::move(name), std::move(shape), spec});\n"
       << "  w_[p].assign(n, 0.0f);\n"
       << "  g_[p].assign(n, 0.0f);\n"
       << "  m_[p].assign(n, 0.0f);\n"
       << (sgd() ? "" : "  v_[p].assign(n, 0.0f);\n") << "}\n\n";
    os << "// Gradients: written by micro-batch 0, accumulated by the others.\n"
       << "static void accumulate(float *g, const float *x, int64_t n, int "
          "micro) {\n"
       << "  if (micro == 0)\n"
       << "    std::memcpy(g, x, size_t(n) * sizeof(float));\n"
       << "  else\n"
       << "    for (int64_t i = 0; i < n; ++i)\n"
       << "      g[i] += x[i];\n"
       << "}\n\n";

    os << "std::string name_ = " << quoted(p.model.getSymName()) << ";\n";
    os << "std::vector<ampc::rt::TensorInfo> inputs_ = {";
    bool first = true;
    for (auto in : p.model.getBlock().getOps<graph::InputOp>()) {
      auto t = cast<RankedTensorType>(in.getType());
      os << (first ? "" : ", ") << "{" << quoted(in.getName()) << ", "
         << dtypeOf(t) << ", " << shapeList(t.getShape()) << "}";
      first = false;
    }
    os << "};\n";
    os << "std::vector<ampc::rt::TensorInfo> outputs_ = {";
    graph::OutputOp out = p.model.getOutputOp();
    for (auto [i, v] : llvm::enumerate(out.getValues())) {
      auto t = cast<RankedTensorType>(v.getType());
      os << (i ? ", " : "") << "{"
         << quoted(cast<StringAttr>(out.getNames()[i]).getValue()) << ", "
         << dtypeOf(t) << ", " << shapeList(t.getShape()) << "}";
    }
    os << "};\n";
    os << "std::vector<ampc::rt::ParamInfo> params_;\n";
    os << "ampc::rt::CompileConfig config_ = [] {\n"
       << "  ampc::rt::CompileConfig c;\n"
       << "  " << llvm::StringRef(configInit).str() << "\n"
       << "  return c;\n"
       << "}();\n";
    os << "\n// FP32 master weights, gradients, optimizer moments.\n";
    os << "std::vector<float> w_[kNumParams], g_[kNumParams], m_[kNumParams]"
       << (sgd() ? "" : ", v_[kNumParams]") << ";\n";
    os << "int64_t step_ = 0;       // optimizer steps taken (not skipped ones)\n"
       << "int64_t iteration_ = 0;  // steps begun, skipped ones included\n"
       << "uint64_t seed_ = 0;\n"
       << "int64_t shard_ = 0;      // data-parallel rank (dropout masks)\n"
       << "float lossAccumulator_ = 0.0f;\n"
       << "ampc::rt::ScalerState scaler_;\n"
       << "std::vector<std::byte> arenaStorage_;\n"
       << "std::byte *arena_ = nullptr;\n";
    os << "\n// CPU kernel library entry points, looked up once.\n";
    for (StringRef name : kernels)
      os << "const ampc::cpu::Kernel " << kernelMember(name) << " = kernel("
         << quoted(name) << ");\n";
    os.unindent();
  }

  // Names that generated locals must not take.
  void reserve(BlockEnv &env) {
    for (StringRef n : {"arena", "inputs", "outputs", "micro", "lossScale",
                        "in", "out", "attrs", "i"})
      env.used.insert(n);
    auto note = [&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "graph" &&
          !kernel::isFusableElementwise(op) &&
          !isa<graph::ModelOp, graph::InputOp, graph::ParamOp, graph::OutputOp,
               graph::ConstantOp, graph::ReshapeOp>(op) &&
          !isa<kernel::FusedElementwiseOp>(op->getParentOp()))
        kernels.insert(op->getName().getStringRef());
    };
    p.grad.walk(note);
    p.model.walk(note);
  }

  std::string configInit;
  int64_t accumSteps = 1;
  llvm::SetVector<StringRef> kernels;
};

} // namespace

LogicalResult ampc::emitCpuTrainingProgram(ModuleOp module, raw_ostream &os) {
  Program p;
  if (failed(collect(module, p)))
    return failure();
  AsmState state(module);
  FileEmitter emitter(p, os, state);
  return emitter.emit();
}
