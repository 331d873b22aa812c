//===- StepCheck.cpp - ampc-stepcheck: a compiled step vs the reference ---===//
//
// A tool of the end-to-end tests (not installed). It reads a model file and
// the --dump-step file a compiled training binary wrote for it (batch,
// weights, gradients and state before/after its first step; see
// runtime/train/StepDump.h) and recomputes that step independently:
//
//   --check=step       @m_grad (the model autocast with --amp, then
//                      graph-autodiff) run by the reference interpreter in
//                      typed numerics on the dumped batch, weights and loss
//                      scale: loss and every gradient vs the binary's; then
//                      the optimizer step from PyTorch's formulas in double,
//                      once from the binary's own gradients (checks the
//                      fused epilogue alone) and, for SGD, once from the
//                      interpreter's (the whole step; Adam's update is
//                      ill-conditioned where a gradient is rounding noise).
//   --check=fp64-norm  the global norm of the FP64 gradients vs the
//                      binary's grad_norm, its clip coefficient, and the SGD
//                      update p1 = p0 - lr * clip_coef * g bit for bit.
//   --check=autocast   the loss of the model autocast to --amp vs its FP32
//                      loss, both by the interpreter, same batch and weights.
//
// Errors are relative in the L2 norm: |a - b| / |b| over a tensor. Prints
// one line per comparison; exits 1 if any is outside its tolerance.
//
//===----------------------------------------------------------------------===//
#include "compiler/InitAll.h"
#include "compiler/ModelLoader.h"
#include "compiler/interp/Interpreter.h"
#include "dialects/Graph/GraphDialect.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/data/DataError.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace llvm;
using ampc::interp::ElemType;
using ampc::interp::Tensor;

namespace {

cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                               cl::desc("<model.mlir>"));
cl::opt<std::string> dumpPath(cl::Positional, cl::Required,
                              cl::desc("<dump.safetensors>"));
cl::opt<std::string> check("check", cl::init("step"),
                           cl::desc("step | fp64-norm | autocast"));
cl::opt<std::string> amp("amp", cl::init("off"),
                         cl::desc("Autocast mode the binary was compiled "
                                  "with (step), or to compare (autocast)"));
cl::opt<double> lossTol("loss-tol", cl::init(1e-5),
                        cl::desc("Relative tolerance of the loss"));
cl::opt<double> gradTol("grad-tol", cl::init(1e-5),
                        cl::desc("Relative tolerance of each gradient"));
cl::opt<double> epilogueTol(
    "epilogue-tol", cl::init(1e-5),
    cl::desc("Relative tolerance of the update computed from the binary's "
             "gradients"));
cl::opt<double> stepTol("step-tol", cl::init(1e-5),
                        cl::desc("Relative tolerance of the update computed "
                                 "from the interpreter's gradients"));
cl::opt<double> normTol("norm-tol", cl::init(1e-5),
                        cl::desc("Relative tolerance of the gradient norm "
                                 "and clip coefficient (fp64-norm)"));
cl::opt<double> updateTol("update-tol", cl::init(1e-5),
                          cl::desc("Relative tolerance of the update vs the "
                                   "FP64 update (fp64-norm)"));

using Vec = std::vector<double>;

struct Dump {
  ampc::rt::SafetensorsFile file;
  const ampc::rt::LoadedTensor &tensor(const std::string &name) const {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end())
      ampc::rt::fail(dumpPath, "no tensor '" + name + "'");
    return it->second;
  }
  bool has(const std::string &name) const {
    return file.tensors.count(name) != 0;
  }
  Vec vec(const std::string &name) const {
    const auto &t = tensor(name);
    return Vec(t.data.begin(), t.data.end());
  }
  std::string meta(const std::string &key) const {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end())
      ampc::rt::fail(dumpPath, "no metadata '" + key + "'");
    return it->second;
  }
  double num(const std::string &key) const { return std::stod(meta(key)); }
};

bool allOk = true;

double relErr(const Vec &a, const Vec &b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  if (d == 0)
    return 0;
  return std::sqrt(d) / std::max(std::sqrt(n), 1e-300);
}

// relErr over the elements finite in both; an element non-finite in one
// only is an infinite error. An overflowing step (one the scaler skips)
// has inf or NaN gradients in both, and which of the two an element gets
// depends on the order of operations, so both count as "not finite".
double relErrFinite(const Vec &a, const Vec &b, size_t &nonFinite) {
  Vec fa, fb;
  for (size_t i = 0; i < a.size(); ++i) {
    bool ia = std::isfinite(a[i]), ib = std::isfinite(b[i]);
    if (ia != ib)
      return INFINITY;
    if (!ia) {
      ++nonFinite;
      continue;
    }
    fa.push_back(a[i]);
    fb.push_back(b[i]);
  }
  return relErr(fa, fb);
}

void report(const std::string &what, double err, double tol) {
  bool ok = err <= tol; // NaN fails
  allOk &= ok;
  outs() << what << ": rel err " << format("%.3g", err) << " (tol "
         << format("%.3g", tol) << ") " << (ok ? "ok" : "FAIL") << "\n";
}

// A tensor of |type|'s element type and shape holding dumped floats.
Tensor toTensor(const ampc::rt::LoadedTensor &t, mlir::Type type) {
  ElemType et = ampc::interp::elemTypeOf(type);
  ampc::interp::Shape shape = ampc::interp::shapeOf(type);
  if (ampc::interp::isFloat(et))
    return Tensor::floats(shape, Vec(t.data.begin(), t.data.end()), et);
  std::vector<int64_t> ints(t.data.begin(), t.data.end());
  return Tensor::ints(shape, ints, et);
}

// Runs |pipeline| on |module|.
bool runPasses(mlir::ModuleOp module, const std::string &pipeline) {
  mlir::PassManager pm(module.getContext());
  std::string error;
  raw_string_ostream os(error);
  if (failed(mlir::parsePassPipeline(pipeline, pm, os))) {
    errs() << "ampc-stepcheck: " << error << "\n";
    return false;
  }
  return succeeded(pm.run(module));
}

// Passes on the module: autocast (unless off), then autodiff if |grad|.
std::string autocastPipeline(const std::string &mode, bool grad) {
  std::string p;
  if (mode != "off")
    p += "graph-autocast{mode=" + mode + "}" + std::string(grad ? "," : "");
  if (grad)
    p += "graph-autodiff";
  return p;
}

// The model's inputs and parameters bound from the dump.
ampc::interp::NamedTensors bindings(ampc::graph::ModelOp model,
                                    const Dump &d) {
  ampc::interp::NamedTensors b;
  for (mlir::Operation &op : model.getBlock()) {
    if (auto in = mlir::dyn_cast<ampc::graph::InputOp>(op))
      b[in.getName().str()] =
          toTensor(d.tensor("input." + in.getName().str()), in.getType());
    else if (auto p = mlir::dyn_cast<ampc::graph::ParamOp>(op))
      b[p.getName().str()] =
          toTensor(d.tensor("before." + p.getName().str()), p.getType());
  }
  return b;
}

struct GradRun {
  double loss = 0; // mean over micro-batches, like StepStats::loss
  std::map<std::string, Vec> grads; // of loss * scale, summed over them
};

// Runs @<model>_grad of |module| on the dump's weights and each of its
// micro-batches (input.NAME, or input.NAME.K when accumulating).
std::optional<GradRun> runGrad(mlir::ModuleOp module, const Dump &d,
                               ampc::interp::Numerics numerics, double scale) {
  ampc::graph::ModelOp model = ampc::getModel(module);
  auto fn = module.lookupSymbol<mlir::func::FuncOp>(
      (model.getSymName() + "_grad").str());
  if (!fn) {
    errs() << "ampc-stepcheck: no @" << model.getSymName() << "_grad\n";
    return std::nullopt;
  }
  ampc::interp::InterpOptions opts;
  opts.numerics = numerics;
  opts.seed = std::stoull(d.meta("seed"));
  const uint64_t iteration = std::stoull(d.meta("iteration"));
  ampc::interp::Interpreter interp(opts);
  const int accum = std::stoi(d.meta("accum_steps"));
  GradRun r;
  for (int micro = 0; micro < accum; ++micro) {
    // Dropout's step, as the binaries key it: one per micro-batch.
    interp.setStep(iteration * uint64_t(accum) + uint64_t(micro));
    std::string suffix = accum > 1 ? "." + std::to_string(micro) : "";
    std::vector<Tensor> args;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      mlir::Type type = fn.getArgument(i).getType();
      if (auto n = fn.getArgAttrOfType<mlir::StringAttr>(i, ampc::graph::kInputAttr))
        args.push_back(toTensor(d.tensor("input." + n.str() + suffix), type));
      else if (auto n =
                   fn.getArgAttrOfType<mlir::StringAttr>(i, ampc::graph::kParamAttr))
        args.push_back(toTensor(d.tensor("before." + n.str()), type));
      else
        args.push_back(Tensor::scalar(scale, ampc::interp::elemTypeOf(type)));
    }
    auto results = interp.runFunction(fn, args);
    if (failed(results))
      return std::nullopt;
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      if (auto n = fn.getResultAttrOfType<mlir::StringAttr>(i, ampc::graph::kOutputAttr))
        if (n.getValue() == "loss")
          r.loss += (*results)[i].f[0] / accum;
      if (auto n = fn.getResultAttrOfType<mlir::StringAttr>(i, ampc::graph::kGradAttr)) {
        Vec &g = r.grads[n.str()];
        const Vec &gi = (*results)[i].f;
        g.resize(gi.size());
        for (size_t k = 0; k < gi.size(); ++k)
          g[k] += gi[k];
      }
    }
  }
  return r;
}

// The optimizer step (PyTorch's GradScaler.unscale_, clip_grad_norm_ /
// clip_grad_value_, SGD / Adam / AdamW formulas) in double, from gradients
// of loss * scale. Returns the state after the step by state-tensor name.
std::map<std::string, Vec> referenceStep(const Dump &d,
                                         std::map<std::string, Vec> grads,
                                         bool &foundInf, double &norm,
                                         bool printClipped = false) {
  // Summed over micro-batches (and ranks): the mean is the gradient.
  const double inv = 1.0 / d.num("scale_used") / d.num("grad_divisor");
  foundInf = false;
  double sum = 0;
  for (auto &[name, g] : grads)
    for (double &x : g) {
      foundInf |= !std::isfinite(x);
      x *= inv;
      sum += x * x;
    }
  norm = std::sqrt(sum);
  if (d.meta("clip_norm") == "1") {
    double coef = std::min(1.0, d.num("hyper.clip_norm") / (norm + 1e-6));
    for (auto &[name, g] : grads)
      for (double &x : g)
        x *= coef;
  }
  if (d.meta("clip_value") == "1") {
    double c = d.num("hyper.clip_value");
    int64_t clipped = 0, total = 0;
    for (auto &[name, g] : grads)
      for (double &x : g) {
        clipped += std::fabs(x) > c;
        ++total;
        x = std::clamp(x, -c, c);
      }
    if (printClipped)
      outs() << "clip by value: " << clipped << " of " << total
             << " elements clipped\n";
  }
  std::map<std::string, Vec> after;
  for (const auto &[name, t] : d.file.tensors)
    if (name.rfind("before.", 0) == 0)
      after[name.substr(7)] = Vec(t.data.begin(), t.data.end());
  if (foundInf)
    return after; // skipped: nothing changes
  const std::string opt = d.meta("optimizer");
  const double lr = d.num("hyper.lr"), wd = d.num("hyper.weight_decay");
  const int64_t step = std::stoll(d.meta("before.optimizer_step")) + 1;
  for (auto &[name, g] : grads) {
    Vec &p = after[name];
    if (opt == "sgd") {
      const double mom = d.num("hyper.momentum"), damp = d.num("hyper.dampening");
      Vec *buf = mom != 0 ? &after[name + ".momentum_buffer"] : nullptr;
      for (size_t i = 0; i < p.size(); ++i) {
        double x = g[i] + wd * p[i];
        if (buf) {
          double b = step == 1 ? x : mom * (*buf)[i] + (1 - damp) * x;
          (*buf)[i] = b;
          x = d.meta("nesterov") == "1" ? x + mom * b : b;
        }
        p[i] -= lr * x;
      }
      continue;
    }
    const double b1 = d.num("hyper.beta1"), b2 = d.num("hyper.beta2"), eps = d.num("hyper.eps");
    const double bc1 = 1 - std::pow(b1, double(step));
    const double bc2 = 1 - std::pow(b2, double(step));
    Vec &m = after[name + ".exp_avg"], &v = after[name + ".exp_avg_sq"];
    for (size_t i = 0; i < p.size(); ++i) {
      double x = g[i];
      if (opt == "adamw")
        // PyTorch's param.mul_(1 - lr * weight_decay) is an in-place FP32
        // op: the factor is used as a float and the decayed parameter is
        // stored as a float before addcdiv_ adds the step (the binary
        // rounds at the same places, num::adamUpdate). Kept in double here,
        // the reference would lack that rounding, up to half an ulp of p
        // beyond the one ulp updateErr allows, which is large against the
        // update where |p| >> |dp| (rel 5.7e-6 on gpt_tiny at wd 0.01).
        p[i] = double(float(p[i]) * float(1 - lr * wd));
      else
        x += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * x;
      v[i] = b2 * v[i] + (1 - b2) * x * x;
      p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
    }
  }
  return after;
}

// The relative error of a parameter update: |after - ref| / |ref - before|
// after allowing each element one float ulp of the stored parameter: the
// binary rounds p + dp to float, and when |p| >> |dp| that rounding alone is
// a large part of dp.
double updateErr(const std::vector<float> &before,
                 const std::vector<float> &after, const Vec &ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    float a = std::fabs(after[i]);
    double ulp = double(std::nextafter(a, INFINITY)) - a;
    double x = std::max(0.0, std::fabs(after[i] - ref[i]) - ulp);
    diff += x * x;
    norm += (ref[i] - before[i]) * (ref[i] - before[i]);
  }
  return diff == 0 ? 0 : std::sqrt(diff) / std::max(std::sqrt(norm), 1e-300);
}

// Compares the binary's state after the step with |ref|: parameters by
// their update, moments as they are.
void compareAfter(const Dump &d, const std::map<std::string, Vec> &ref,
                  const std::string &label, double tol) {
  double worst = 0;
  std::string worstName;
  for (const auto &[name, r] : ref) {
    const auto &after = d.tensor("after." + name).data;
    double e = d.has("grad." + name)
                   ? updateErr(d.tensor("before." + name).data, after, r)
                   : relErr(Vec(after.begin(), after.end()), r);
    if (!(e <= worst)) {
      worst = e;
      worstName = name;
    }
  }
  report(label + " (worst: " + (worstName.empty() ? "-" : worstName) + ")",
         worst, tol);
}

int checkStep(mlir::ModuleOp module, const Dump &d) {
  if (!runPasses(module, autocastPipeline(amp, /*grad=*/true)))
    return 1;
  const double scale = d.num("scale_used");
  auto run = runGrad(module, d, ampc::interp::Numerics::Typed, scale);
  if (!run)
    return 1;
  outs() << "loss: binary " << d.meta("loss") << " interpreter "
         << format("%.9g", run->loss) << "\n";
  report("loss", relErr({d.num("loss")}, {run->loss}), lossTol);
  double worst = 0;
  std::string worstName;
  std::map<std::string, Vec> binaryGrads;
  size_t nonFinite = 0;
  for (const auto &[name, g] : run->grads) {
    binaryGrads[name] = d.vec("grad." + name);
    double e = relErrFinite(binaryGrads[name], g, nonFinite);
    if (!(e <= worst)) {
      worst = e;
      worstName = name;
    }
  }
  report("gradients (worst: " + (worstName.empty() ? "-" : worstName) + ")",
         worst, gradTol);
  if (nonFinite)
    outs() << "gradients: " << nonFinite
           << " elements not finite in both (an overflowing step)\n";
  if (!(worst <= gradTol)) {
    // Where it differs most, for diagnosis.
    const Vec &a = binaryGrads[worstName], &b = run->grads[worstName];
    size_t at = 0;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::fabs(a[i] - b[i]) > std::fabs(a[at] - b[at]))
        at = i;
    outs() << "  largest difference: " << worstName << "[" << at
           << "]: binary " << format("%.9g", a[at]) << " interpreter "
           << format("%.9g", b[at]) << "\n";
  }

  bool foundInf;
  double norm;
  auto fromBinary = referenceStep(d, binaryGrads, foundInf, norm,
                                  /*printClipped=*/true);
  outs() << "skipped: binary " << d.meta("skipped") << " reference "
         << (foundInf ? 1 : 0) << "\n";
  allOk &= (d.meta("skipped") == "1") == foundInf;
  if (!foundInf)
    report("grad_norm", relErr({d.num("grad_norm")}, {norm}), epilogueTol);
  compareAfter(d, fromBinary, "update from the binary's gradients",
               epilogueTol);
  if (d.meta("optimizer") != "sgd") {
    // Adam divides each gradient element by its own magnitude, so where a
    // gradient is rounding noise (e.g. attention key biases, whose exact
    // gradient is 0) independent noise gives unrelated updates of size lr.
    outs() << "update from the interpreter's gradients: not compared for "
              "Adam (ill-conditioned where gradients are noise)\n";
    return 0;
  }
  auto fromInterp = referenceStep(d, run->grads, foundInf, norm);
  compareAfter(d, fromInterp, "update from the interpreter's gradients",
               stepTol);
  return 0;
}

int checkFp64Norm(mlir::ModuleOp module, const Dump &d) {
  if (!runPasses(module, autocastPipeline("off", /*grad=*/true)))
    return 1;
  if (d.meta("accum_steps") != "1") {
    errs() << "ampc-stepcheck: --check=fp64-norm needs --accum-steps=1\n";
    return 1;
  }
  auto run = runGrad(module, d, ampc::interp::Numerics::FP64, 1.0);
  if (!run)
    return 1;
  double sum = 0;
  for (const auto &[name, g] : run->grads)
    for (double x : g)
      sum += x * x;
  const double norm = std::sqrt(sum), maxNorm = d.num("hyper.clip_norm");
  outs() << "grad_norm: binary " << d.meta("grad_norm") << " fp64 "
         << format("%.17g", norm) << "\n";
  report("grad_norm vs fp64", relErr({d.num("grad_norm")}, {norm}), normTol);
  const double coef64 = std::min(1.0, maxNorm / (norm + 1e-6));
  outs() << "clip_coef: binary " << d.meta("clip_coef") << " fp64 "
         << format("%.9g", coef64) << (coef64 < 1 ? " (clipping)" : "")
         << "\n";
  report("clip_coef vs fp64", relErr({d.num("clip_coef")}, {coef64}),
         normTol);
  // The coefficient from the binary's own norm, in float ops as torch
  // evaluates it: reciprocal(norm + 1e-6) * clip_norm, clamped to 1.
  float binNorm = float(d.num("grad_norm"));
  float coef = std::min((1.0f / (binNorm + float(1e-6))) * float(maxNorm), 1.0f);
  bool coefExact = coef == float(d.num("clip_coef"));
  allOk &= coefExact;
  outs() << "clip_coef from the binary's norm: " << format("%.9g", coef)
         << (coefExact ? " exact" : " DIFFERS") << "\n";
  if (d.meta("optimizer") != "sgd" || d.num("hyper.momentum") != 0 ||
      d.num("hyper.weight_decay") != 0 || d.meta("skipped") != "0") {
    errs() << "ampc-stepcheck: the update check needs plain SGD and a step "
              "that was not skipped\n";
    return 1;
  }
  // p1 = p0 + (-lr) * (g * inv_scale * clip_coef), each op in float.
  const float inv = float(1.0 / double(float(d.num("scale_used"))));
  const float negLr = float(-d.num("hyper.lr"));
  int64_t mismatches = 0, total = 0;
  std::vector<float> p0s, p1s;
  Vec ref64;
  for (const auto &[name, g64] : run->grads) {
    const auto &p0 = d.tensor("before." + name).data;
    const auto &p1 = d.tensor("after." + name).data;
    const auto &g = d.tensor("grad." + name).data;
    for (size_t i = 0; i < p0.size(); ++i) {
      float gi = inv == 1.0f ? g[i] : g[i] * inv;
      float expect = p0[i] + negLr * (gi * coef);
      mismatches += expect != p1[i];
      ++total;
      p0s.push_back(p0[i]);
      p1s.push_back(p1[i]);
      ref64.push_back(p0[i] - d.num("hyper.lr") * coef64 * g64[i]);
    }
  }
  allOk &= mismatches == 0;
  outs() << "sgd update p1 = p0 - lr * clip_coef * g: " << mismatches
         << " of " << total << " elements differ\n";
  report("update vs fp64", updateErr(p0s, p1s, ref64), updateTol);
  return 0;
}

int checkAutocast(mlir::ModuleOp module, const Dump &d) {
  mlir::OwningOpRef<mlir::ModuleOp> half = module.clone();
  if (!runPasses(*half, autocastPipeline(amp, /*grad=*/false)))
    return 1;
  ampc::interp::Interpreter interp;
  auto fp32 = interp.runModel(ampc::getModel(module),
                              bindings(ampc::getModel(module), d));
  auto mixed = interp.runModel(ampc::getModel(*half),
                               bindings(ampc::getModel(*half), d));
  if (failed(fp32) || failed(mixed))
    return 1;
  double a = mixed->at("loss").f[0], b = fp32->at("loss").f[0];
  outs() << "loss: fp32 " << format("%.9g", b) << " " << amp << " "
         << format("%.9g", a) << "\n";
  report("autocast loss", relErr({a}, {b}), lossTol);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv,
                              "ampc-stepcheck: a compiled training step vs "
                              "the reference interpreter\n");
  ampc::registerAllPasses();
  auto context = ampc::createContext();
  auto module = ampc::loadModelFile(*context, modelPath);
  if (!module)
    return 1;
  try {
    Dump d{ampc::rt::readSafetensors(dumpPath)};
    int rc = check == "step"       ? checkStep(*module, d)
             : check == "fp64-norm" ? checkFp64Norm(*module, d)
             : check == "autocast"  ? checkAutocast(*module, d)
                                    : (errs() << "unknown --check\n", 1);
    if (rc)
      return rc;
  } catch (const ampc::rt::InputError &e) {
    errs() << "error: " << e.what() << "\n";
    return 1;
  }
  outs() << (allOk ? "PASS" : "FAIL") << "\n";
  return allOk ? 0 : 1;
}
