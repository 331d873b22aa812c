//===- ExplainCommand.cpp - `ampc explain MODEL.mlir` ---------------------===//
//
// Runs graph-autocast on a model and shows where every op runs and why: a
// table (or JSON), a Graphviz picture, and the IR after each pass.
//
//===----------------------------------------------------------------------===//
#include "compiler/InitAll.h"
#include "compiler/ModelLoader.h"
#include "compiler/amp/Report.h"
#include "compiler/cli/Command.h"
#include "passes/Passes.h"
#include "passes/amp/Policy.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
int runExplain();

ampc::cli::Command explainCommand(
    "explain",
    "Show the precision each op runs in under AMP, and the rule that decided "
    "it",
    runExplain);

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<model.mlir>"),
                               cl::sub(explainCommand),
                               cl::cat(ampc::cli::category()));

cl::opt<std::string> ampMode("amp", cl::init("fp16"),
                             cl::desc("Half type: fp16 or bf16"),
                             cl::value_desc("fp16|bf16"),
                             cl::sub(explainCommand),
                             cl::cat(ampc::cli::category()));

cl::opt<std::string> policyFile(
    "policy", cl::init(""),
    cl::desc("Policy file amending or replacing the default lists. Lines:\n"
             "  base: default|empty      (first line; empty drops the "
             "defaults)\n"
             "  lower|fp32|promote|follow: OP...   (move ops to a category)\n"
             "  pin fp32|fp16|bf16|half: NAME|FILE:LINE[:COL]...\n"
             "  # comments. See docs/amp-policy.md"),
    cl::value_desc("file"), cl::sub(explainCommand),
    cl::cat(ampc::cli::category()));

enum class Format { Text, Json };
cl::opt<Format> format(
    "format", cl::init(Format::Text), cl::desc("Report format"),
    cl::values(clEnumValN(Format::Text, "text", "a table and a summary"),
               clEnumValN(Format::Json, "json",
                          "one object per op, the casts and the summary")),
    cl::sub(explainCommand), cl::cat(ampc::cli::category()));

cl::opt<std::string> dotFile(
    "dot", cl::desc("Write the model graph as Graphviz dot: ops coloured by "
                    "precision, casts as labelled edges"),
    cl::value_desc("file"), cl::sub(explainCommand),
    cl::cat(ampc::cli::category()));

cl::opt<std::string> svgFile(
    "svg", cl::desc("Render the graph to SVG (needs Graphviz's `dot`)"),
    cl::value_desc("file"), cl::sub(explainCommand),
    cl::cat(ampc::cli::category()));

cl::opt<std::string> dumpIRDir(
    "dump-ir",
    cl::desc("Write the IR before the passes and after each pass, one "
             "numbered file per pass (00-input.mlir, 01-graph-autocast.mlir)"),
    cl::value_desc("dir"), cl::sub(explainCommand),
    cl::cat(ampc::cli::category()));

cl::opt<bool> printIR("print-ir",
                      cl::desc("Print the IR after autocast to stdout, "
                               "before the report"),
                      cl::sub(explainCommand), cl::cat(ampc::cli::category()));

cl::opt<bool> showPolicy(
    "show-policy",
    cl::desc("Print the effective policy (defaults plus --policy) and exit"),
    cl::sub(explainCommand), cl::cat(ampc::cli::category()));

// Writes the module after every top-level pass to DIR/NN-<pass>.mlir.
class DumpIRInstrumentation : public mlir::PassInstrumentation {
public:
  explicit DumpIRInstrumentation(std::string dir) : dir(std::move(dir)) {}

  bool write(mlir::Operation *op, StringRef what) {
    SmallString<128> path(dir);
    sys::path::append(path, formatv("{0:02}-{1}.mlir", counter++, what).str());
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec) {
      errs() << "ampc explain: cannot write '" << path << "': " << ec.message()
             << "\n";
      return false;
    }
    op->print(os);
    return true;
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    if (isa<mlir::ModuleOp>(op))
      write(op, pass->getArgument());
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override {
    if (isa<mlir::ModuleOp>(op))
      write(op, (pass->getArgument() + "-failed").str());
  }

private:
  std::string dir;
  int counter = 0;
};

int writeFile(StringRef path, function_ref<void(raw_ostream &)> fn) {
  std::error_code ec;
  ToolOutputFile out(path, ec, sys::fs::OF_Text);
  if (ec) {
    errs() << "ampc explain: cannot write '" << path << "': " << ec.message()
           << "\n";
    return 1;
  }
  fn(out.os());
  out.keep();
  return 0;
}

int runExplain() {
  if (ampMode != "fp16" && ampMode != "bf16") {
    errs() << "ampc explain: --amp must be fp16 or bf16, got '" << ampMode
           << "'\n";
    return 2;
  }
  std::string dotProgram;
  if (!svgFile.empty()) {
    auto found = sys::findProgramByName("dot");
    if (!found) {
      errs() << "ampc explain: --svg needs Graphviz's `dot` program, which is "
                "not on PATH (install Graphviz, e.g. `apt install graphviz`), "
                "or write the graph with --dot FILE and render it elsewhere\n";
      return 1;
    }
    dotProgram = *found;
  }

  if (showPolicy) {
    ampc::amp::Policy policy = ampc::amp::Policy::defaults();
    if (!policyFile.empty()) {
      auto buffer = MemoryBuffer::getFile(policyFile);
      if (!buffer) {
        errs() << "ampc explain: cannot read policy file '" << policyFile
               << "': " << buffer.getError().message() << "\n";
        return 1;
      }
      std::string error;
      unsigned line = 0, col = 0;
      auto parsed =
          ampc::amp::Policy::parse((*buffer)->getBuffer(), error, line, col);
      if (!parsed) {
        errs() << policyFile << ":" << line << ":" << col << ": error: "
               << error << "\n";
        return 1;
      }
      policy = std::move(*parsed);
    }
    policy.print(outs());
    return 0;
  }

  auto context = ampc::createContext();
  auto module = ampc::loadModelFile(*context, inputFile);
  if (!module)
    return 1;

  // Pass diagnostics (a bad policy file line) print as file:line:col with
  // the offending line, like parse errors.
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, context.get());
  mlir::PassManager pm(context.get());
  if (!dumpIRDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(dumpIRDir)) {
      errs() << "ampc explain: cannot create '" << dumpIRDir
             << "': " << ec.message() << "\n";
      return 1;
    }
    auto dump = std::make_unique<DumpIRInstrumentation>(dumpIRDir);
    if (!dump->write(module->getOperation(), "input"))
      return 1;
    pm.addInstrumentation(std::move(dump));
  }
  ampc::GraphAutocastOptions options;
  options.mode = ampMode;
  options.policy = policyFile;
  pm.addPass(ampc::createGraphAutocast(options));
  if (failed(pm.run(*module)))
    return 1;

  if (printIR) {
    module->print(outs());
    outs() << "\n";
  }
  ampc::graph::ModelOp model = ampc::getModel(*module);
  ampc::PrecisionReport report =
      ampc::buildPrecisionReport(model, ampMode, policyFile);
  if (format == Format::Json)
    ampc::printPrecisionJson(report, outs());
  else
    ampc::printPrecisionText(report, outs());

  auto printDot = [&](raw_ostream &os) { ampc::printPrecisionDot(model, os); };
  if (!dotFile.empty() && writeFile(dotFile, printDot))
    return 1;
  if (!svgFile.empty()) {
    SmallString<128> tmp;
    if (sys::fs::createTemporaryFile("ampc-explain", "dot", tmp)) {
      errs() << "ampc explain: cannot create a temporary file\n";
      return 1;
    }
    FileRemover remover(tmp);
    if (writeFile(tmp, printDot))
      return 1;
    std::string err;
    int rc = sys::ExecuteAndWait(dotProgram,
                                 {dotProgram, "-Tsvg", tmp.str(), "-o",
                                  svgFile.getValue()},
                                 std::nullopt, {}, 0, 0, &err);
    if (rc != 0) {
      errs() << "ampc explain: `dot -Tsvg` failed"
             << (err.empty() ? "" : ": " + err) << "\n";
      return 1;
    }
  }
  return 0;
}
} // namespace
