//===- GradcheckCommand.cpp - `ampc gradcheck MODEL.mlir` ------------------===//
//
// Checks the autodiff gradients of a model against central finite
// differences in FP64 (the reference interpreter). If the file already holds
// `<model>_grad` (hand-written, or from a previous `ampc-opt
// --graph-autodiff`), that function is checked as is; otherwise the
// graph-autodiff pass builds it.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/cli/Command.h"
#include "compiler/interp/GradCheck.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runGradcheck();

ampc::cli::Command gradcheckCommand(
    "gradcheck",
    "Check autodiff gradients against finite differences (FP64)", runGradcheck);

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<model.mlir>"),
                               cl::sub(gradcheckCommand),
                               cl::cat(ampc::cli::category()));
cl::opt<uint64_t> seed("seed", cl::init(0),
                       cl::desc("Seed of the random inputs, parameters, probe "
                                "choice and dropout masks (default 0)"),
                       cl::sub(gradcheckCommand),
                       cl::cat(ampc::cli::category()));
cl::opt<uint64_t> step("step", cl::init(0),
                       cl::desc("Training step the dropout masks are drawn "
                                "for; fixed for every evaluation (default 0)"),
                       cl::sub(gradcheckCommand),
                       cl::cat(ampc::cli::category()));
cl::opt<double> eps("eps", cl::init(1e-6),
                    cl::desc("Central-difference step (default 1e-6)"),
                    cl::sub(gradcheckCommand), cl::cat(ampc::cli::category()));
cl::opt<double> atol("atol", cl::init(1e-5),
                     cl::desc("Absolute tolerance: an element passes if "
                              "|autodiff - numeric| <= atol + rtol * |numeric| "
                              "(default 1e-5)"),
                     cl::sub(gradcheckCommand),
                     cl::cat(ampc::cli::category()));
cl::opt<double> rtol("rtol", cl::init(1e-3),
                     cl::desc("Relative tolerance (default 1e-3)"),
                     cl::sub(gradcheckCommand),
                     cl::cat(ampc::cli::category()));
cl::opt<int64_t> maxProbes(
    "max-probes", cl::init(20),
    cl::desc("Elements probed per parameter, chosen at random (seeded) when "
             "the parameter is larger (default 20)"),
    cl::sub(gradcheckCommand), cl::cat(ampc::cli::category()));

// Builds `<model>_grad` with the graph-autodiff pass.
mlir::LogicalResult runAutodiff(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(ampc::createGraphAutodiff());
  return pm.run(module);
}

int runGradcheck() {
  auto context = ampc::createContext();
  auto module = ampc::loadModelFile(*context, inputFile);
  if (!module)
    return 1;
  ampc::graph::ModelOp model = ampc::getModel(*module);
  std::string gradName = (model.getSymName() + "_grad").str();
  auto gradFunc = module->lookupSymbol<mlir::func::FuncOp>(gradName);
  if (!gradFunc) {
    if (failed(runAutodiff(*module)))
      return 1;
    model = ampc::getModel(*module);
    gradFunc = module->lookupSymbol<mlir::func::FuncOp>(gradName);
    if (!gradFunc) {
      errs() << "ampc gradcheck: graph-autodiff made no @" << gradName << "\n";
      return 1;
    }
  }
  ampc::interp::GradCheckOptions options;
  options.seed = seed;
  options.step = step;
  options.eps = eps;
  options.atol = atol;
  options.rtol = rtol;
  options.maxProbes = maxProbes;
  auto report = ampc::interp::runGradCheck(model, gradFunc, options);
  if (failed(report))
    return 1;
  outs() << "gradcheck @" << model.getSymName() << "\n";
  ampc::interp::printGradCheckReport(*report, options, outs());
  return report->ok() ? 0 : 1;
}
} // namespace
