//===- AuditCommand.cpp - `ampc audit MODEL.mlir` -------------------------===//
//
// Runs forward and backward of a model on a few batches twice, in its AMP
// placement (graph-autocast, exact half rounding, the loss scale applied as
// in training) and in FP64 from the same weights, and reports per op how
// the half-precision values fare: overflow, underflow, range, error. The
// work is in compiler/audit/; this file maps flags onto it.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/audit/Audit.h"
#include "compiler/audit/Inputs.h"
#include "compiler/cli/Command.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;

namespace {
int runAudit();

ampc::cli::Command auditCommand(
    "audit",
    "Per-op FP16/BF16 overflow, underflow and error against FP64, on real "
    "batches",
    runAudit);

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<model.mlir>"), cl::sub(auditCommand),
                               cl::cat(ampc::cli::category()));
cl::opt<std::string> ampMode("amp", cl::init("fp16"),
                             cl::desc("Half type: fp16 or bf16"),
                             cl::value_desc("fp16|bf16"), cl::sub(auditCommand),
                             cl::cat(ampc::cli::category()));
cl::list<std::string> dataItems(
    "data", cl::CommaSeparated,
    cl::desc("NAME=PATH[:TOKENTYPE] per model input, as for the training "
             "binary (.npy, IDX and .gz, token files). Without it: seeded "
             "synthetic inputs"),
    cl::value_desc("name=path,..."), cl::sub(auditCommand),
    cl::cat(ampc::cli::category()));
cl::opt<std::string> weightsFile(
    "weights",
    cl::desc("Weights from a safetensors file (default: the model's seeded "
             "initializers, as the training binary starts from)"),
    cl::value_desc("file"), cl::sub(auditCommand),
    cl::cat(ampc::cli::category()));
cl::opt<std::string> checkpointDir(
    "checkpoint",
    cl::desc("Weights from a training checkpoint (a checkpoint directory, or "
             "a --checkpoint-dir holding `latest`)"),
    cl::value_desc("dir"), cl::sub(auditCommand),
    cl::cat(ampc::cli::category()));
cl::opt<int64_t> numBatches("batches", cl::init(2),
                            cl::desc("Batches to run (default 2)"),
                            cl::sub(auditCommand),
                            cl::cat(ampc::cli::category()));
cl::opt<double> lossScale(
    "loss-scale", cl::init(0),
    cl::desc("Loss scale seeding the backward pass (default: the scale in "
             "--checkpoint's train_state.json, else 65536, GradScaler's "
             "initial scale, for fp16 and 1 for bf16)"),
    cl::sub(auditCommand), cl::cat(ampc::cli::category()));
cl::opt<uint64_t> seed("seed", cl::init(0),
                       cl::desc("The training run's --seed: initializers, "
                                "data order, dropout masks (default 0)"),
                       cl::sub(auditCommand), cl::cat(ampc::cli::category()));
cl::opt<std::string> policyFile(
    "policy", cl::init(""),
    cl::desc("AMP policy file, as for ampc compile (docs/amp-policy.md)"),
    cl::value_desc("file"), cl::sub(auditCommand),
    cl::cat(ampc::cli::category()));
enum class Format { Text, Json };
cl::opt<Format> format(
    "format", cl::init(Format::Text), cl::desc("Report format"),
    cl::values(clEnumValN(Format::Text, "text", "a table and the ops at risk"),
               clEnumValN(Format::Json, "json", "everything, for scripts")),
    cl::sub(auditCommand), cl::cat(ampc::cli::category()));
cl::opt<std::string> dumpIRDir(
    "dump-ir",
    cl::desc(
        "Write the audited IR (after autocast and autodiff) with each "
        "op's statistics as an `audit` attribute to DIR/<model>.audit.mlir"),
    cl::value_desc("dir"), cl::sub(auditCommand),
    cl::cat(ampc::cli::category()));

int fail(const Twine &message, int status = 1) {
  errs() << "ampc audit: " << message << "\n";
  return status;
}

int runAudit() {
  if (ampMode != "fp16" && ampMode != "bf16")
    return fail("--amp must be fp16 or bf16, got '" + ampMode + "'", 2);
  if (!weightsFile.empty() && !checkpointDir.empty())
    return fail("give --weights or --checkpoint, not both", 2);
  if (numBatches < 1)
    return fail("--batches must be at least 1", 2);
  double scale = lossScale;
  if (scale < 0 || !std::isfinite(scale))
    return fail("--loss-scale must be positive and finite", 2);
  // A checkpoint's weights go with the scale its run had reached.
  if (scale == 0 && !checkpointDir.empty())
    scale = ampc::audit::checkpointLossScale(checkpointDir).value_or(0);
  if (scale == 0)
    scale = ampMode == "fp16" ? 65536.0 : 1.0;

  auto context = ampc::createContext();
  auto module = ampc::loadModelFile(*context, inputFile);
  if (!module)
    return 1;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, context.get());
  mlir::PassManager pm(context.get());
  ampc::GraphAutocastOptions autocast;
  autocast.mode = ampMode;
  autocast.policy = policyFile;
  pm.addPass(ampc::createGraphAutocast(autocast));
  pm.addPass(ampc::createGraphAutodiff());
  if (failed(pm.run(*module)))
    return 1;
  ampc::graph::ModelOp model = ampc::getModel(*module);
  std::string gradName = (model.getSymName() + "_grad").str();
  auto gradFunc = module->lookupSymbol<mlir::func::FuncOp>(gradName);
  if (!gradFunc)
    return fail("graph-autodiff made no @" + gradName);

  std::string error, weightsNote, dataNote;
  ampc::interp::NamedTensors weights;
  if (!weightsFile.empty() || !checkpointDir.empty()) {
    bool ckpt = !checkpointDir.empty();
    std::string path = ckpt ? checkpointDir : weightsFile;
    auto loaded = ampc::audit::loadWeights(model, path, ckpt, error);
    if (!loaded)
      return fail(error, 2);
    weights = std::move(*loaded);
    weightsNote = (ckpt ? "checkpoint " : "") + path;
  } else {
    weights = ampc::audit::initialWeights(model, seed);
    weightsNote =
        "the model's initializers (seed " + std::to_string(seed) + ")";
  }
  std::vector<ampc::interp::NamedTensors> batches;
  if (!dataItems.empty()) {
    auto loaded = ampc::audit::loadBatches(
        model, std::vector<std::string>(dataItems.begin(), dataItems.end()),
        numBatches, seed, error);
    if (!loaded)
      return fail(error, 2);
    batches = std::move(*loaded);
    for (const std::string &item : dataItems)
      dataNote += (dataNote.empty() ? "" : ", ") + item;
    dataNote += " (the first batches of a training run with --seed " +
                std::to_string(seed) + ")";
  } else {
    batches = ampc::audit::syntheticBatches(model, numBatches, seed);
    dataNote = "synthetic: no --data given, seeded random inputs (floats "
               "N(0, 1); not your data's ranges)";
  }

  ampc::audit::AuditOptions options;
  options.mode = ampMode;
  options.lossScale = scale;
  options.seed = seed;
  ampc::audit::Auditor auditor(model, gradFunc, options);
  for (const auto &batch : batches)
    if (failed(auditor.addBatch(batch, weights)))
      return 1;
  ampc::audit::AuditReport report = auditor.finish();
  report.policy = policyFile;
  report.data = dataNote;
  report.weights = weightsNote;

  if (format == Format::Json)
    ampc::audit::printAuditJson(report, outs());
  else
    ampc::audit::printAuditText(report, outs());

  if (!dumpIRDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(dumpIRDir))
      return fail("cannot create '" + dumpIRDir + "': " + ec.message());
    ampc::audit::annotate(report);
    SmallString<128> path(dumpIRDir);
    sys::path::append(path, model.getSymName() + ".audit.mlir");
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    module->print(os);
  }
  return 0;
}
} // namespace
