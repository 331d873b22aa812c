//===- CompileCommand.cpp - `ampc compile MODEL.mlir -o BIN` ---------------===//
//
// Model file -> training pipeline (passes/Pipelines.h) -> C++ or CUDA C++
// (the target's emitter) -> host compiler + runtime -> a standalone training
// binary.
//
//===----------------------------------------------------------------------===//
#include "compiler/HostCompiler.h"
#include "compiler/InitAll.h"
#include "compiler/ModelLoader.h"
#include "compiler/cli/Command.h"
#include "compiler/cli/CostReportOf.h"
#include "compiler/cli/PipelineFlags.h"
#include "compiler/targets/common/EmitSupport.h"
#include "compiler/targets/cpu/CpuEmitter.h"
#include "compiler/targets/cuda/CudaEmitter.h"
#include "passes/Pipelines.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace mlir;

namespace {
int runCompile();

#define AMPC_OPT(type, var, ...)                                               \
  cl::opt<type> var(__VA_ARGS__, cl::sub(ampc::cli::compileCommand()),         \
                    cl::cat(ampc::cli::category()))

AMPC_OPT(std::string, inputFile, cl::Positional, cl::Required,
         cl::desc("<model.mlir>"));
AMPC_OPT(std::string, outputFile, "o",
         cl::desc("The training binary (or the C++ with --emit=cpp; "
                  "default: ./train, or stdout for C++)"),
         cl::value_desc("path"), cl::init(""));
AMPC_OPT(std::string, target, "target",
         cl::desc("cpu (C++, OpenBLAS) or cuda (CUDA C++, nvcc, cuBLASLt) "
                  "(default: cpu)"),
         cl::init("cpu"));
AMPC_OPT(std::string, cudaArch, "cuda-arch",
         cl::desc("GPU architectures for --target=cuda, e.g. 80,90 "
                  "(default: the build's AMPC_CUDA_ARCHS)"),
         cl::init(""));
AMPC_OPT(double, lr, "lr", cl::desc("Learning rate the binary uses unless its --lr says "
                  "otherwise (default: 0.001)"));
AMPC_OPT(double, weightDecay, "weight-decay",
         cl::desc("Weight decay the binary uses unless its --weight-decay "
                  "says otherwise (default: as torch.optim: 0.01 for adamw, "
                  "0 for sgd and adam)"));
AMPC_OPT(std::string, dumpIr, "dump-ir",
         cl::desc("Write the IR after every pass into this directory "
                  "(default: none)"),
         cl::value_desc("dir"), cl::init(""));
AMPC_OPT(std::string, emit, "emit",
         cl::desc("binary or cpp (write the C++ and stop; default: binary)"),
         cl::init("binary"));
AMPC_OPT(bool, keepTemps, "keep-temps",
         cl::desc("Keep the generated C++ in its temporary directory "
                  "(default: off)"),
         cl::init(false));
AMPC_OPT(std::string, sanitize, "sanitize", cl::ValueOptional,
         cl::desc("Build the binary with sanitizers: --sanitize is "
                  "address,undefined, or give a -fsanitize list (a runtime "
                  "built with -DAMPC_SANITIZE adds its own; default: off)"),
         cl::value_desc("list"), cl::init(""));
AMPC_OPT(std::string, costReport, "cost-report",
         cl::desc("Also write `ampc cost`'s report of the compiled step "
                  "(JSON if FILE ends in .json, else text; default: none)"),
         cl::value_desc("file"), cl::init(""));
AMPC_OPT(std::string, costDevice, "cost-device",
         cl::desc("Device of --cost-report (default h100 for cuda, "
                  "cpu-2core for cpu)"),
         cl::init(""));
AMPC_OPT(bool, verbose, "v", cl::desc("Show the host compiler command (default: off)"),
         cl::init(false));

// Writes the module after each pass to DIR/NN-<pass>.mlir.
class DumpIR : public PassInstrumentation {
public:
  explicit DumpIR(std::string dir) : dir(std::move(dir)) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    write(pass->getArgument().str(), op);
  }
  void write(const std::string &name, Operation *op) {
    SmallString<128> path(dir);
    char prefix[8];
    std::snprintf(prefix, sizeof(prefix), "%02d-", index++);
    sys::path::append(path, prefix + name + ".mlir");
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec) {
      errs() << "ampc: cannot write " << path << ": " << ec.message() << "\n";
      return;
    }
    // As ampc-opt prints it, so the last dump equals
    // `ampc-opt --ampc-train-pipeline=...` byte for byte.
    op->print(os);
    os << "\n";
  }

private:
  std::string dir;
  int index = 0;
};

// --sanitize alone means address,undefined.
std::string sanitizeList() {
  if (sanitize.getNumOccurrences() && sanitize.empty())
    return "address,undefined";
  return sanitize;
}

// --cost-report: the report of `ampc cost` for the IR just lowered.
LogicalResult writeCostReport(ModuleOp module, bool cuda,
                              const ampc::cost::DeviceSpec &device) {
  auto report = ampc::cli::costReportOf(
      module, cuda ? ampc::cost::Target::Cuda : ampc::cost::Target::Cpu,
      device);
  if (failed(report))
    return failure();
  std::string err;
  auto file = mlir::openOutputFile(costReport, &err);
  if (!file) {
    errs() << "ampc: " << err << "\n";
    return failure();
  }
  if (StringRef(costReport).ends_with(".json"))
    ampc::cost::printCostJson(*report, file->os());
  else
    ampc::cost::printCostText(*report, file->os());
  file->keep();
  return success();
}

int runCompile() {
  ampc::registerAllPasses();
  // The same options as `ampc-opt --ampc-train-pipeline=...`.
  ampc::TrainPipelineOptions options;
  ampc::cli::applyPipelineFlags(options, target == "cuda");
  // Given or not, as the pipeline's weight decay takes a negative value to
  // mean torch.optim's default; validate() checks the rest.
  if (lr.getNumOccurrences())
    options.lr = lr;
  if (weightDecay.getNumOccurrences()) {
    if (!(weightDecay >= 0)) {
      errs() << "ampc: --weight-decay=" << format("%g", weightDecay.getValue())
             << ": must be a finite number >= 0\n";
      return 2;
    }
    options.weightDecay = weightDecay;
  }
  if (emit != "binary" && emit != "cpp") {
    errs() << "ampc: --emit=" << emit << ": expected binary or cpp\n";
    return 2;
  }
  if (target != "cpu" && target != "cuda") {
    errs() << "ampc: --target=" << target << ": expected cpu or cuda\n";
    return 2;
  }
  bool cuda = target == "cuda";
  const ampc::cost::DeviceSpec *costSpec = nullptr;
  if (!costReport.empty()) {
    std::string name = !costDevice.empty() ? costDevice.getValue()
                       : cuda                 ? "h100"
                                              : "cpu-2core";
    costSpec = ampc::cost::findDevice(name);
    if (!costSpec || costSpec->target != target) {
      errs() << "ampc: --cost-device=" << name << ": expected a "
             << target.getValue() << " device of "
             << ampc::cost::knownDevices() << "\n";
      return 2;
    }
  }
  bool cppOnly = emit == "cpp";
  std::string output =
      outputFile.empty() ? (cppOnly ? "-" : "train") : outputFile.getValue();
  // Progress goes to stderr when stdout carries the C++.
  raw_ostream &progress = (cppOnly && output == "-") ? errs() : outs();

  auto context = ampc::createContext();
  auto module = ampc::loadModelFile(*context, inputFile);
  if (!module)
    return 1;
  StringRef modelName = ampc::getModel(*module).getSymName();
  options.gradGiven =
      bool(SymbolTable::lookupSymbolIn(*module, (modelName + "_grad").str()));
  std::string error = ampc::validate(options);
  if (!error.empty()) {
    errs() << "ampc: " << error << "\n";
    return 2;
  }
  PassManager pm(context.get());
  ampc::buildTrainingPipeline(pm, options);
  if (!dumpIr.empty()) {
    if (std::error_code ec = sys::fs::create_directories(dumpIr)) {
      errs() << "ampc: cannot create " << dumpIr << ": " << ec.message()
             << "\n";
      return 1;
    }
    context->disableMultithreading();
    auto dump = std::make_unique<DumpIR>(dumpIr);
    dump->write("model", *module);
    pm.addInstrumentation(std::move(dump));
  }

  progress << "[1/3] lowering " << inputFile << " (amp=" << options.amp.getValue()
           << ", optimizer=" << options.optimizer.getValue()
           << ", loss-scale=" << ampc::effectiveLossScale(options) << ")\n";
  progress.flush();
  if (failed(pm.run(*module)))
    return 1;
  if (costSpec && failed(writeCostReport(*module, cuda, *costSpec)))
    return 1;
  std::string cpp;
  raw_string_ostream cppStream(cpp);
  if (failed(cuda ? ampc::emitCudaTrainingProgram(*module, cppStream)
                  : ampc::emitCpuTrainingProgram(*module, cppStream)))
    return 1;

  if (cppOnly) {
    std::string err;
    auto file = mlir::openOutputFile(output, &err);
    if (!file) {
      errs() << "ampc: " << err << "\n";
      return 1;
    }
    file->os() << cpp;
    file->keep();
    return 0;
  }

  SmallString<128> tempDir;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("ampc-compile", tempDir)) {
    errs() << "ampc: cannot create a temporary directory: " << ec.message()
           << "\n";
    return 1;
  }
  SmallString<128> cppPath(tempDir);
  // The model's name may hold any printable character ('/' too).
  sys::path::append(cppPath,
                    ampc::emit::identifier(ampc::getModel(*module).getSymName()) +
                        (cuda ? ".cu" : ".cpp"));
  {
    std::error_code ec;
    raw_fd_ostream os(cppPath, ec);
    if (ec) {
      errs() << "ampc: cannot write " << cppPath << ": " << ec.message()
             << "\n";
      return 1;
    }
    os << cpp;
  }
  std::vector<std::string> cmd =
      cuda ? ampc::cudaCompileCommand(cppPath, output, cudaArch,
                                      sanitizeList(), error)
           : ampc::hostCompileCommand(cppPath, output, sanitizeList(), error);
  if (cmd.empty()) {
    errs() << "ampc: " << error << " (the generated C++ is in " << tempDir
           << ")\n";
    return 1;
  }
  progress << "[2/3] " << sys::path::filename(cmd[0]) << " "
           << (cuda ? "-O1 " : "-O2 ") << sys::path::filename(cppPath);
  if (std::vector<std::string> san = ampc::effectiveSanitizers(sanitizeList());
      !san.empty())
    progress << " (sanitizers: " << llvm::join(san, ",") << ")";
  if (verbose) {
    progress << "\n      ";
    for (const std::string &arg : cmd)
      progress << arg << " ";
  }
  progress << "\n";
  progress.flush();
  int rc = ampc::runCommand(cmd, error);
  if (rc != 0) {
    if (rc < 0)
      errs() << "ampc: " << error << "\n";
    else
      errs() << "ampc: the host compiler failed (exit code " << rc << ")\n";
    errs() << "ampc: the generated C++ is kept in " << cppPath << "\n";
    return 1;
  }
  if (keepTemps)
    progress << "      kept " << cppPath << "\n";
  else
    sys::fs::remove_directories(tempDir);
  std::string shown = output;
  if (!sys::path::has_parent_path(output))
    shown = "./" + output;
  progress << "[3/3] done: " << shown << "\n";
  return 0;
}
} // namespace

ampc::cli::Command &ampc::cli::compileCommand() {
  static Command command(
      "compile", "Compile a model file into a mixed-precision training binary",
      runCompile);
  return command;
}
