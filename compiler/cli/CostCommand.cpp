//===- CostCommand.cpp - `ampc cost MODEL.mlir` ----------------------------===//
//
// Runs the training pipeline (as `ampc compile` does) and prints the cost
// report of one training step: every launch in step order with its bytes,
// FLOPs and roofline time on a device of compiler/cost/DeviceTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/InitAll.h"
#include "compiler/ModelLoader.h"
#include "compiler/cli/Command.h"
#include "compiler/cli/CostReportOf.h"
#include "compiler/cli/PipelineFlags.h"
#include "compiler/targets/cuda/CudaEmitter.h"
#include "dialects/Graph/GraphOps.h"
#include "passes/Pipelines.h"
#include "runtime/comm/BucketLayout.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runCost();

#define AMPC_OPT(type, var, ...)                                               \
  cl::opt<type> var(__VA_ARGS__, cl::sub(ampc::cli::costCommand()),            \
                    cl::cat(ampc::cli::category()))

AMPC_OPT(std::string, inputFile, cl::Positional, cl::desc("<model.mlir>"),
         cl::init(""));
AMPC_OPT(std::string, target, "target",
         cl::desc("cuda (default) or cpu: whose launches are counted"),
         cl::init("cuda"));
AMPC_OPT(std::string, device, "device",
         cl::desc("A row of the device table (--list-devices); default h100 "
                  "for cuda, cpu-2core for cpu"),
         cl::init(""));
AMPC_OPT(std::string, format, "format", cl::desc("text (default) or json"),
         cl::init("text"));
AMPC_OPT(unsigned, top, "top", cl::desc("Kernels in the top list (default: 10)"),
         cl::init(10));
AMPC_OPT(int, worldSize, "world-size",
         cl::desc("Data-parallel ranks (as `mpirun -np N`): one rank's step "
                  "with the bucketed gradient all-reduce, ring algorithm on "
                  "the device's link (default 1: one process)"),
         cl::init(1));
AMPC_OPT(double, bucketMb, "bucket-mb",
         cl::desc("FP32 gradient MiB per all-reduce bucket, as the training "
                  "binary's --bucket-mb: more than 0, at most 1048576, at "
                  "most 2^20 buckets (default 25)"),
         cl::init(25.0));
AMPC_OPT(std::string, reduceDtype, "reduce-dtype",
         cl::desc("The all-reduce's type, as the training binary's "
                  "--reduce-dtype: fp32 (default), fp16 or bf16 (the CPU "
                  "target only)"),
         cl::init("fp32"));
AMPC_OPT(bool, overlapAllreduce, "overlap-allreduce",
         cl::desc("Buckets start as the backward finishes their gradients, "
                  "as the training binary's --overlap-allreduce (default "
                  "on; the CUDA target)"),
         cl::init(true));
AMPC_OPT(bool, listDevices, "list-devices",
         cl::desc("Print the device table with its sources and exit "
                  "(default: off)"),
         cl::init(false));

// As the training binary refuses it (runtime/train/DataParallel.cpp).
int bucketMbError(const std::string &why) {
  errs() << "ampc cost: --bucket-mb=" << llvm::format("%g", bucketMb.getValue())
         << ": " << why << "\n";
  return 2;
}

int runCost() {
  if (listDevices) {
    ampc::cost::printDeviceTable(outs());
    return 0;
  }
  if (inputFile.empty()) {
    errs() << "ampc cost: no model file given\n";
    return 2;
  }
  if (target != "cuda" && target != "cpu") {
    errs() << "ampc cost: --target=" << target << ": expected cuda or cpu\n";
    return 2;
  }
  if (worldSize < 1) {
    errs() << "ampc cost: --world-size=" << worldSize
           << ": expected at least 1\n";
    return 2;
  }
  // The device table's link is one NVLink node (8 GPUs on HGX boards).
  if (worldSize > 8 && target == "cuda")
    errs() << "ampc cost: warning: --world-size=" << worldSize
           << ": priced as one NVLink node; a ring across nodes is slower "
              "(not modelled)\n";
  // As the training binary (runtime/train/DataParallel.cpp).
  if (std::string why = ampc::rt::bucketSizeProblem(bucketMb); !why.empty())
    return bucketMbError(why);
  if (reduceDtype != "fp32" && reduceDtype != "fp16" && reduceDtype != "bf16") {
    errs() << "ampc cost: --reduce-dtype=" << reduceDtype
           << ": expected fp32, fp16 or bf16\n";
    return 2;
  }
  // As the training binary (runtime/train/DataParallel.cpp).
  if (reduceDtype != "fp32" && target == "cuda") {
    errs() << "ampc cost: --reduce-dtype=" << reduceDtype
           << ": the CUDA target sums gradients in fp32 only\n";
    return 2;
  }
  if (format != "text" && format != "json") {
    errs() << "ampc cost: --format=" << format << ": expected text or json\n";
    return 2;
  }
  std::string deviceName = !device.empty() ? device.getValue()
                           : target == "cuda" ? "h100"
                                              : "cpu-2core";
  const ampc::cost::DeviceSpec *spec = ampc::cost::findDevice(deviceName);
  if (!spec) {
    errs() << "ampc cost: unknown --device=" << deviceName
           << " (known: " << ampc::cost::knownDevices() << ")\n";
    return 2;
  }
  if (spec->target != target) {
    errs() << "ampc cost: --device=" << deviceName << " models --target="
           << spec->target << ", not " << target << "\n";
    return 2;
  }

  ampc::registerAllPasses();
  ampc::TrainPipelineOptions options;
  ampc::cli::applyPipelineFlags(options, target == "cuda");

  auto context = ampc::createContext();
  auto module = ampc::loadModelFile(*context, inputFile);
  if (!module)
    return 1;
  StringRef modelName = ampc::getModel(*module).getSymName();
  options.gradGiven = bool(
      mlir::SymbolTable::lookupSymbolIn(*module, (modelName + "_grad").str()));
  std::string error = ampc::validate(options);
  if (!error.empty()) {
    errs() << "ampc cost: " << error << "\n";
    return 2;
  }
  mlir::PassManager pm(context.get());
  ampc::buildTrainingPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  // At any world size, before building millions of rows.
  std::vector<size_t> counts;
  for (auto p : ampc::getModel(*module).getBlock().getOps<ampc::graph::ParamOp>())
    counts.push_back(size_t(
        mlir::cast<mlir::RankedTensorType>(p.getType()).getNumElements()));
  if (std::string why = ampc::rt::bucketSizeProblem(bucketMb, counts);
      !why.empty())
    return bucketMbError(why);
  ampc::cost::DataParallelSpec dp;
  dp.worldSize = worldSize;
  dp.bucketBytes = *ampc::rt::bucketBytesOfMb(bucketMb); // checked above
  dp.reduceDtype = reduceDtype;
  dp.overlap = overlapAllreduce;
  auto report = ampc::cli::costReportOf(
      *module,
      target == "cuda" ? ampc::cost::Target::Cuda : ampc::cost::Target::Cpu,
      *spec, dp);
  if (failed(report))
    return 1;
  if (format == "json")
    ampc::cost::printCostJson(*report, outs(), top);
  else
    ampc::cost::printCostText(*report, outs(), top);
  return 0;
}
} // namespace

ampc::cli::Command &ampc::cli::costCommand() {
  static Command command(
      "cost", "Per-kernel bytes, FLOPs and roofline time of one training step",
      runCost);
  return command;
}

mlir::FailureOr<ampc::cost::CostReport>
ampc::cli::costReportOf(mlir::ModuleOp module, cost::Target target,
                        const cost::DeviceSpec &device,
                        const cost::DataParallelSpec &dp) {
  std::vector<std::string> names;
  if (target == cost::Target::Cuda) {
    auto emitted = cudaFusedKernelNames(module);
    if (failed(emitted))
      return mlir::failure();
    names = std::move(*emitted);
  }
  return cost::buildCostReport(module, target, device, names, dp);
}
