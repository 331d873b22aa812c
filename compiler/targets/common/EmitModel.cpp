//===- EmitModel.cpp - The Model class: metadata, bindings, main() --------===//
#include "compiler/targets/common/EmitModel.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/TrainStep.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc;
using namespace ampc::emit;

// ampc::num::InitAttrs fields of a #graph initializer, in declaration order
// (designated initializers).
std::string ampc::emit::initAttrs(Attribute init) {
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

LogicalResult ampc::emit::collect(ModuleOp module, Program &p) {
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
           << "the emitter needs one train.fused_epilogue in @"
           << p.step.getSymName() << " (run train-fuse-epilogue)";
  for (auto param : p.model.getBlock().getOps<graph::ParamOp>())
    p.paramNames.push_back(param.getName().str());
  p.config = p.step->getAttrOfType<DictionaryAttr>(kTrainConfigAttr);
  p.defaults = p.step->getAttrOfType<DictionaryAttr>(kTrainDefaultsAttr);
  if (!p.config || !p.defaults)
    return p.step.emitError() << "has no train.config / train.defaults";
  return success();
}

int64_t ampc::emit::arenaSize(Operation *op) {
  auto a = op->getAttrOfType<IntegerAttr>(kernel::kArenaSizeAttr);
  return a ? a.getInt() : 0;
}

std::string ampc::emit::scalarHelpers(const TargetSyntax &t, StringRef relu) {
  std::string fn = (t.scalarQualifiers + " float ").str();
  std::string erf = t.math("erf"), tanh = t.math("tanh"), exp = t.math("exp");
  return "constexpr float kSqrtHalf = 0.70710678118654752440f;\n"
         "constexpr float kSqrt2OverPi = 0.79788456080286535588f;\n"
         "constexpr float kInvSqrt2Pi = 0.39894228040143267794f;\n"
         "constexpr float kKappa = 0.044715f;\n" +
         relu.str() + fn + "gelu_erf(float x) {\n" +
         "  return 0.5f * x * (1.0f + " + erf + "(x * kSqrtHalf));\n" +
         "}\n" + fn + "gelu_tanh(float x) {\n" +
         "  float inner = kSqrt2OverPi * (x + kKappa * x * x * x);\n" +
         "  return 0.5f * x * (1.0f + " + tanh + "(inner));\n" + "}\n" + fn +
         "gelu_erf_grad(float x, float g) {\n" +
         "  float cdf = 0.5f * (1.0f + " + erf + "(x * kSqrtHalf));\n" +
         "  float pdf = kInvSqrt2Pi * " + exp + "(-0.5f * x * x);\n" +
         "  return g * (cdf + x * pdf);\n" + "}\n" + fn +
         "gelu_tanh_grad(float x, float g) {\n" +
         "  float x2 = x * x;\n" +
         "  float inner = kSqrt2OverPi * (x + kKappa * x2 * x);\n" +
         "  float t = " + tanh + "(inner);\n" +
         "  float left = 0.5f * x, right = 1.0f + t;\n" +
         "  float dleft = 0.5f * right;\n" +
         "  float dright = left * (1.0f - t * t) * kSqrt2OverPi * (1.0f + "
         "3.0f * kKappa * x2);\n" +
         "  return g * (dleft + dright);\n" + "}\n";
}

void ampc::emit::emitFileHeader(raw_ostream &os, const Program &p,
                                const TargetSyntax &t) {
  graph::ModelOp model = p.model;
  os << "// Generated by ampc for model @" << model.getSymName()
     << " (target " << t.target
     << "). Edits are lost when it is recompiled.\n";
  os << "// " << p.config << "\n";
}

void ampc::emit::emitMetadataAccessors(raw_indented_ostream &os) {
  os << "const std::string &name() const override { return name_; }\n"
     << "const std::vector<ampc::rt::TensorInfo> &inputs() const override "
        "{ return inputs_; }\n"
     << "const std::vector<ampc::rt::ParamInfo> &params() const override "
        "{ return params_; }\n"
     << "const std::vector<ampc::rt::TensorInfo> &outputs() const override "
        "{ return outputs_; }\n"
     << "const ampc::rt::CompileConfig &config() const override { return "
        "config_; }\n\n";
}

int64_t ampc::emit::accumSteps(const Program &p) {
  auto accum = p.config.getAs<IntegerAttr>("accum_steps");
  return accum ? accum.getInt() : 1;
}

void ampc::emit::emitDefaults(raw_indented_ostream &os, const Program &p) {
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
    Attribute a = p.defaults.get(key);
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

namespace {
// One consumer's limit on an integer value: valid values are [0, bound),
// and |ignore| too where the consumer skips it.
struct ValueLimit {
  int64_t bound;
  std::optional<int64_t> ignore;
  const char *by;
};

// The limits the consumers of |v| put on its values, through the ops that
// only move values around (as the interpreter's gradcheck draws its random
// integer inputs).
void collectLimits(Value v, SmallVectorImpl<ValueLimit> &out) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto ce = dyn_cast<graph::CrossEntropyOp>(user)) {
      if (use.getOperandNumber() == 1)
        out.push_back(
            {cast<RankedTensorType>(ce.getLogits().getType()).getShape().back(),
             int64_t(ce.getIgnoreIndex()), "classes of the cross_entropy"});
    } else if (auto emb = dyn_cast<graph::EmbeddingOp>(user)) {
      if (use.getOperandNumber() == 0)
        out.push_back(
            {cast<RankedTensorType>(emb.getTable().getType()).getDimSize(0),
             std::nullopt, "rows of the embedding table"});
    } else if (isa<graph::ReshapeOp, graph::TransposeOp, graph::SliceOp,
                   graph::ConcatOp>(user)) {
      collectLimits(user->getResult(0), out);
    }
  }
}

// ", bound, ignore, by" for a TensorInfo initializer; empty when nothing
// bounds |v|. The bound is the tightest consumer's; the ignore value stays
// allowed only when every consumer skips that same value.
std::string valueBoundFields(Value v) {
  SmallVector<ValueLimit> limits;
  collectLimits(v, limits);
  if (limits.empty())
    return "";
  const ValueLimit *tight = &limits.front();
  std::optional<int64_t> ignore = tight->ignore;
  for (const ValueLimit &l : limits) {
    if (l.bound < tight->bound)
      tight = &l;
    if (l.ignore != ignore)
      ignore = std::nullopt;
  }
  return ", " + std::to_string(tight->bound) + ", " +
         (ignore ? std::to_string(*ignore) : std::string("std::nullopt")) +
         ", " + quoted(tight->by);
}
} // namespace

void ampc::emit::emitTensorInfos(raw_indented_ostream &os, const Program &p) {
  graph::ModelOp model = p.model;
  os << "std::string name_ = " << quoted(model.getSymName()) << ";\n";
  os << "std::vector<ampc::rt::TensorInfo> inputs_ = {";
  bool first = true;
  for (auto in : model.getBlock().getOps<graph::InputOp>()) {
    auto t = cast<RankedTensorType>(in.getType());
    os << (first ? "" : ", ") << "{" << quoted(in.getName()) << ", "
       << dtypeOf(t) << ", " << shapeList(t.getShape())
       << (t.getElementType().isInteger() ? valueBoundFields(in->getResult(0)) : "") << "}";
    first = false;
  }
  os << "};\n";
  os << "std::vector<ampc::rt::TensorInfo> outputs_ = {";
  graph::OutputOp out = model.getOutputOp();
  for (auto [i, v] : llvm::enumerate(out.getValues())) {
    auto t = cast<RankedTensorType>(v.getType());
    os << (i ? ", " : "") << "{"
       << quoted(cast<StringAttr>(out.getNames()[i]).getValue()) << ", "
       << dtypeOf(t) << ", " << shapeList(t.getShape()) << "}";
  }
  os << "};\n";
}

void ampc::emit::emitCompileConfig(raw_indented_ostream &os, const Program &p,
                                   const TargetSyntax &t) {
  auto str = [&](StringRef key) {
    auto s = p.config.getAs<StringAttr>(key);
    return quoted(s ? s.getValue() : "");
  };
  auto flag = [&](StringRef key) {
    auto b = p.config.getAs<BoolAttr>(key);
    return b && b.getValue() ? "true" : "false";
  };
  os << "ampc::rt::CompileConfig config_ = [] {\n"
     << "  ampc::rt::CompileConfig c;\n"
     << "  c.target = \"" << t.target << "\";\n"
     << "  c.amp = " << str("amp") << ";\n"
     << "  c.optimizer = " << str("optimizer") << ";\n"
     << "  c.lossScale = " << str("loss_scale") << ";\n"
     << "  c.nesterov = " << flag("nesterov") << ";\n"
     << "  c.clipNorm = " << flag("clip_norm") << ";\n"
     << "  c.clipValue = " << flag("clip_value") << ";\n"
     << "  c.accumSteps = " << accumSteps(p) << ";\n"
     << "  return c;\n"
     << "}();\n";
}

llvm::SetVector<StringRef> ampc::emit::libraryKernels(const Program &p) {
  llvm::SetVector<StringRef> kernels;
  auto note = [&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "graph" &&
        !kernel::isFusableElementwise(op) &&
        !isa<graph::ModelOp, graph::InputOp, graph::ParamOp, graph::OutputOp,
             graph::ConstantOp, graph::ReshapeOp>(op) &&
        !isa<kernel::FusedElementwiseOp>(op->getParentOp()))
      kernels.insert(op->getName().getStringRef());
  };
  func::FuncOp grad = p.grad;
  graph::ModelOp model = p.model;
  grad.walk(note);
  model.walk(note);
  return kernels;
}

void ampc::emit::emitKernelMembers(raw_indented_ostream &os,
                                   const llvm::SetVector<StringRef> &kernels,
                                   const TargetSyntax &t) {
  os << "\n// " << t.name << " kernel library entry points, looked up once.\n";
  for (StringRef name : kernels)
    os << "const " << t.library << "::Kernel " << kernelMember(name)
       << " = kernel(" << quoted(name) << ");\n";
}

void ampc::emit::emitClassEndAndMain(raw_indented_ostream &os,
                                     StringRef className) {
  os << "};\n\n} // namespace\n\n";
  os << "int main(int argc, char **argv) {\n"
     << "  static " << className << " model;\n"
     << "  return ampc::rt::trainMain(argc, argv, model);\n"
     << "}\n";
}

LogicalResult ampc::emit::bindGradArguments(const Program &p, BlockEnv &env,
                                            raw_indented_ostream &os,
                                            const TargetSyntax &t,
                                            StringRef paramSuffix,
                                            StringRef lossScale,
                                            InputPrinter input) {
  func::FuncOp fn = p.grad;
  int inputIndex = 0;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string type = t.elementType(arg.getType());
    if (auto in = fn.getArgAttrOfType<StringAttr>(i, kGraphInputAttr)) {
      std::string name = env.fresh("in_" + in.getValue().str());
      input(name, type, inputIndex++, arg);
      env.names[arg] = name;
    } else if (auto pa = fn.getArgAttrOfType<StringAttr>(i, kGraphParamAttr)) {
      auto it = llvm::find(p.paramNames, pa.getValue().str());
      if (it == p.paramNames.end() || type != "float")
        return fn.emitError() << "argument " << i
                              << ": unknown or non-FP32 parameter " << pa;
      std::string name = env.fresh("p_" + pa.getValue().str());
      os << "float *" << name << " = w_[" << (it - p.paramNames.begin())
         << "]" << paramSuffix << ";\n";
      env.names[arg] = name;
    } else if (fn.getArgAttr(i, kGraphLossScaleAttr)) {
      env.names[arg] = lossScale.str();
    } else {
      return fn.emitError() << "argument " << i
                            << " is not an input, a parameter or the loss "
                               "scale";
    }
  }
  return success();
}

void ampc::emit::bindModelValues(const Program &p, BlockEnv &env,
                                 raw_indented_ostream &os,
                                 const TargetSyntax &t, StringRef paramSuffix,
                                 InputPrinter input) {
  graph::ModelOp model = p.model;
  int in = 0, param = 0;
  for (Operation &op : model.getBlock()) {
    if (auto i = dyn_cast<graph::InputOp>(op)) {
      std::string type = t.elementType(i.getType());
      std::string name = env.fresh("in_" + i.getName().str());
      input(name, type, in++, i.getResult());
      env.names[i.getResult()] = name;
    } else if (auto w = dyn_cast<graph::ParamOp>(op)) {
      std::string name = env.fresh("p_" + w.getName().str());
      os << "float *" << name << " = w_[" << param++ << "]" << paramSuffix
         << ";\n";
      env.names[w.getResult()] = name;
    }
  }
}

LogicalResult ampc::emit::forEachGradResult(
    const Program &p, function_ref<void(Value)> loss,
    function_ref<void(Value, size_t, int64_t, StringRef)> grad) {
  func::FuncOp fn = p.grad;
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  bool sawLoss = false;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto o = fn.getResultAttrOfType<StringAttr>(i, kGraphOutputAttr)) {
      if (o.getValue() == "loss") {
        loss(v);
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
    int64_t count = cast<RankedTensorType>(v.getType()).getNumElements();
    grad(v, it - p.paramNames.begin(), count, g.getValue());
  }
  if (!sawLoss)
    return fn.emitError() << "returns no output named \"loss\"";
  return success();
}
