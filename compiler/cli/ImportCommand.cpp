//===- ImportCommand.cpp - `ampc import MODEL.onnx` -----------------------===//
//
// Imports an ONNX model into a graph.model file (and its initializers into
// a safetensors file for the training binary's --init-weights). Also
// `ampc onnx-node-tests DIR`, the conformance runner over ONNX's node tests.
// Without ONNX (CMake AMPC_WITH_ONNX off) both say so and fail.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelLoader.h"
#include "compiler/cli/Command.h"

#if AMPC_WITH_ONNX
#include "compiler/import/onnx/Importer.h"
#include "compiler/import/onnx/NodeTests.h"
#endif

#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runImport();
int runNodeTests();

ampc::cli::Command importCommand("import",
                                 "Import an ONNX model as a graph.model file",
                                 runImport);
ampc::cli::Command nodeTestsCommand(
    "onnx-node-tests",
    "(developers) Run ONNX's node tests through import and the interpreter",
    runNodeTests);

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<model.onnx>"), cl::sub(importCommand),
                               cl::cat(ampc::cli::category()));
cl::opt<std::string> outputFile("o", cl::init("-"),
                                cl::desc("Output model file (default stdout)"),
                                cl::value_desc("model.mlir"),
                                cl::sub(importCommand),
                                cl::cat(ampc::cli::category()));
cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Write the parameters' values (the float "
                         "initializers) to this safetensors file; train from "
                         "them with the binary's --init-weights FILE"),
                cl::value_desc("model.safetensors"), cl::sub(importCommand),
                cl::cat(ampc::cli::category()));
cl::opt<int64_t> batch("batch", cl::init(0),
                       cl::desc("Size of every dynamic first dimension of "
                                "the graph inputs"),
                       cl::sub(importCommand), cl::cat(ampc::cli::category()));
cl::list<std::string> dims("dim",
                           cl::desc("Size of a named dynamic dimension "
                                    "(dim_param), NAME=N; repeatable"),
                           cl::value_desc("NAME=N"), cl::sub(importCommand),
                           cl::cat(ampc::cli::category()));
cl::opt<std::string>
    loss("loss",
         cl::desc("Append a loss when the graph does not end in a scalar: "
                  "cross_entropy:OUTPUT,LABEL_INPUT or mse:OUTPUT,TARGET_INPUT "
                  "(LABEL_INPUT/TARGET_INPUT become new model inputs)"),
         cl::sub(importCommand), cl::cat(ampc::cli::category()));
cl::opt<std::string> modelName("name",
                               cl::desc("graph.model symbol (default: the "
                                        "file's stem)"),
                               cl::sub(importCommand),
                               cl::cat(ampc::cli::category()));

cl::opt<std::string> testRoot(cl::Positional,
                              cl::init("/usr/share/libonnx-testdata/data/node"),
                              cl::desc("<node test directory>"),
                              cl::sub(nodeTestsCommand),
                              cl::cat(ampc::cli::category()));
cl::opt<std::string> testFilter("filter", cl::init(""),
                                cl::desc("Run tests whose name contains this"),
                                cl::sub(nodeTestsCommand),
                                cl::cat(ampc::cli::category()));
cl::opt<bool> testVerbose("v", cl::desc("One line per test"),
                          cl::sub(nodeTestsCommand),
                          cl::cat(ampc::cli::category()));

#if AMPC_WITH_ONNX
int runImport() {
  ampc::onnx::ImportOptions options;
  options.path = inputFile;
  options.modelName = modelName;
  if (batch.getNumOccurrences()) {
    if (batch <= 0) { // --batch 0 had been ignored, then asked for
      errs() << "ampc import: --batch expects N > 0, got " << batch << "\n";
      return 1;
    }
    options.batch = batch;
  }
  for (const std::string &d : dims) {
    StringRef name, value;
    std::tie(name, value) = StringRef(d).split('=');
    int64_t n;
    if (name.empty() || value.getAsInteger(10, n) || n <= 0) {
      errs() << "ampc import: --dim expects NAME=N with N > 0, got '" << d
             << "'\n";
      return 1;
    }
    options.dims[name.str()] = n;
  }
  if (!loss.empty()) {
    StringRef kind, rest, out, label;
    std::tie(kind, rest) = StringRef(loss).split(':');
    std::tie(out, label) = rest.split(',');
    if ((kind != "cross_entropy" && kind != "mse") || out.empty() ||
        label.empty()) {
      errs() << "ampc import: --loss expects cross_entropy:OUTPUT,LABEL_INPUT "
                "or mse:OUTPUT,TARGET_INPUT, got '"
             << loss << "'\n";
      return 1;
    }
    options.loss = kind.str();
    options.lossOutput = out.str();
    options.lossLabel = label.str();
  }
  ampc::onnx::Graph graph;
  std::string error;
  if (!ampc::onnx::readModel(inputFile, graph, error)) {
    errs() << "ampc import: " << error << "\n";
    return 1;
  }
  auto context = ampc::createContext();
  std::optional<ampc::onnx::ImportResult> result =
      ampc::onnx::importGraph(*context, graph, options);
  if (!result)
    return 1;
  if (!weightsFile.empty() &&
      !ampc::onnx::writeWeights(weightsFile, result->weights, error)) {
    errs() << "ampc import: " << error << "\n";
    return 1;
  }
  auto out = mlir::openOutputFile(outputFile, &error);
  if (!out) {
    errs() << "ampc import: " << error << "\n";
    return 1;
  }
  out->os() << "// Imported from " << inputFile << " by ampc import";
  if (!weightsFile.empty())
    out->os() << "; weights in " << weightsFile
              << " (train with --init-weights " << weightsFile << ")";
  out->os() << ".\n// Locations name the ONNX nodes.\n";
  // Locations are printed so diagnostics on the file point at ONNX nodes.
  result->module->print(out->os(),
                        mlir::OpPrintingFlags().enableDebugInfo(true, false));
  out->os() << "\n";
  out->keep();
  for (const std::string &note : result->notes)
    errs() << "ampc import: note: " << note << "\n";
  return 0;
}

int runNodeTests() {
  auto context = ampc::createContext();
  int failures = ampc::onnx::runNodeTests(*context, testRoot, testFilter, 1e-3,
                                          1e-7, testVerbose);
  return failures == 0 ? 0 : 1;
}
#else
int withoutOnnx() {
  errs() << "ampc: built without ONNX (install libonnx-dev and "
            "libprotobuf-dev, then reconfigure with -DAMPC_WITH_ONNX=ON)\n";
  return 1;
}
int runImport() { return withoutOnnx(); }
int runNodeTests() { return withoutOnnx(); }
#endif
} // namespace
