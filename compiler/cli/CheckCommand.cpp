//===- CheckCommand.cpp - `ampc check MODEL.mlir` --------------------------===//
//
// Parses and verifies a model file and prints a one-screen summary.
//
//===----------------------------------------------------------------------===//
#include "compiler/InitAll.h"
#include "compiler/ModelLoader.h"
#include "compiler/ModelSummary.h"
#include "compiler/cli/Command.h"
#include "compiler/targets/common/EmitSupport.h"
#include "dialects/Graph/GraphDialect.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runCheck();

ampc::cli::Command checkCommand(
    "check", "Parse and verify a model file and summarise it", runCheck);

cl::list<std::string> inputFiles(cl::Positional, cl::OneOrMore,
                                 cl::desc("<model.mlir>..."),
                                 cl::sub(checkCommand),
                                 cl::cat(ampc::cli::category()));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("Optimizer the step memory assumes: "
                                        "sgd, adam or adamw"),
                               cl::init("adamw"), cl::sub(checkCommand),
                               cl::cat(ampc::cli::category()));
cl::opt<std::string> amp("amp",
                         cl::desc("Mixed precision the step memory assumes: "
                                  "off, fp16 or bf16"),
                         cl::init("off"), cl::sub(checkCommand),
                         cl::cat(ampc::cli::category()));

std::string mib(uint64_t bytes) {
  std::string s;
  raw_string_ostream os(s);
  os << format("%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  return s;
}

// The memory one training step of the compiled binary holds: FP32 master
// parameters, their gradients, the optimizer state (momentum buffer, or
// Adam's two moments), under AMP the half weight copies the epilogue keeps
// (train-half-weight-copies) and the memory plan's arena of activations and
// temporaries (the training pipeline of `ampc compile` with the same
// --optimizer and --amp, up to kernel-plan-memory).
mlir::LogicalResult printStepMemory(mlir::ModuleOp module, raw_ostream &os) {
  ampc::TrainPipelineOptions options;
  options.amp = amp;
  options.optimizer = optimizer;
  ampc::graph::ModelOp model = ampc::getModel(module);
  options.gradGiven = bool(mlir::SymbolTable::lookupSymbolIn(
      module, (model.getSymName() + "_grad").str()));
  std::string error = ampc::validate(options);
  if (!error.empty()) {
    errs() << "ampc: " << error << "\n";
    return mlir::failure();
  }
  uint64_t params = 0;
  for (auto p : model.getBlock().getOps<ampc::graph::ParamOp>())
    params += uint64_t(ampc::emit::byteSize(p.getType()));
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  mlir::PassManager pm(module.getContext());
  ampc::buildTrainingPipeline(pm, options);
  if (failed(pm.run(*copy)))
    return mlir::failure();
  uint64_t arena = 0, half = 0;
  for (mlir::Operation &op : copy->getBody()->getOperations()) {
    arena = std::max<uint64_t>(arena, ampc::emit::arenaSize(&op));
    if (auto fn = dyn_cast<mlir::func::FuncOp>(op))
      for (mlir::BlockArgument arg : fn.getArguments())
        if (fn.getArgAttr(arg.getArgNumber(), ampc::graph::kParamCopyAttr))
          half += uint64_t(ampc::emit::byteSize(arg.getType()));
  }
  int moments = optimizer == "sgd" ? 1 : 2;
  uint64_t total = params * (2 + moments) + half + arena;
  os << "step memory (optimizer " << optimizer << ", amp " << amp
     << "): " << mib(total) << " = parameters " << mib(params)
     << " + gradients " << mib(params) << " + optimizer state "
     << mib(params * moments) << " (" << moments
     << (moments == 1 ? " buffer" : " moments") << ")";
  if (half)
    os << " + half weight copies " << mib(half);
  os << " + activations " << mib(arena) << " (memory plan); " << total
     << " bytes\n";
  return mlir::success();
}

int runCheck() {
  ampc::registerAllPasses();
  auto context = ampc::createContext();
  int failures = 0;
  for (const std::string &path : inputFiles) {
    auto module = ampc::loadModelFile(*context, path);
    if (!module) {
      ++failures;
      continue;
    }
    if (inputFiles.size() > 1)
      outs() << "== " << path << "\n";
    ampc::printModelSummary(ampc::getModel(*module), outs());
    if (failed(printStepMemory(*module, outs())))
      ++failures;
    if (inputFiles.size() > 1)
      outs() << "\n";
  }
  return failures ? 1 : 0;
}
} // namespace
