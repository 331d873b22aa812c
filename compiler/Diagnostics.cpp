//===- Diagnostics.cpp - file:line:col diagnostics --------------------------===//
#include "compiler/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;

namespace {
// The source files diagnostics point into, read on first use.
struct Sources {
  llvm::SourceMgr mgr;
  llvm::StringMap<unsigned> ids; // file name -> buffer (0: unreadable)

  llvm::SMLoc find(FileLineColLoc loc) {
    StringRef file = loc.getFilename().getValue();
    auto [it, inserted] = ids.try_emplace(file, 0);
    if (inserted) {
      std::string included;
      it->second = mgr.AddIncludeFile(file.str(), llvm::SMLoc(), included);
    }
    if (!it->second)
      return {};
    return mgr.FindLocForLineAndColumn(it->second, loc.getLine(),
                                       loc.getColumn());
  }
};

llvm::SourceMgr::DiagKind kindOf(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Note:
    return llvm::SourceMgr::DK_Note;
  case DiagnosticSeverity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case DiagnosticSeverity::Remark:
    return llvm::SourceMgr::DK_Remark;
  case DiagnosticSeverity::Error:
    break;
  }
  return llvm::SourceMgr::DK_Error;
}

StringRef nameOf(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Error:
    break;
  }
  return "error";
}

void print(Sources &sources, Location loc, DiagnosticSeverity severity,
           const std::string &message) {
  llvm::raw_ostream &os = llvm::errs();
  auto file = loc->findInstanceOf<FileLineColLoc>();
  if (!file) {
    os << nameOf(severity) << ": " << message << "\n";
    return;
  }
  // Line 0: a file without text positions (an imported ONNX model, see
  // compiler/import/onnx): name the node instead.
  if (file.getLine() == 0) {
    os << file.getFilename().getValue();
    if (auto name = loc->findInstanceOf<NameLoc>())
      os << ":" << name.getName().getValue();
    os << ": " << nameOf(severity) << ": " << message << "\n";
    return;
  }
  llvm::SMLoc at = sources.find(file);
  if (at.isValid()) {
    sources.mgr.PrintMessage(os, at, kindOf(severity), message);
    return;
  }
  os << file.getFilename().getValue() << ":" << file.getLine() << ":"
     << file.getColumn() << ": " << nameOf(severity) << ": " << message
     << "\n";
}
} // namespace

void ampc::installDiagnosticPrinter(MLIRContext &context) {
  auto sources = std::make_shared<Sources>();
  context.getDiagEngine().registerHandler([sources](Diagnostic &diag) {
    print(*sources, diag.getLocation(), diag.getSeverity(), diag.str());
    for (Diagnostic &note : diag.getNotes())
      print(*sources, note.getLocation(), note.getSeverity(), note.str());
    llvm::errs().flush();
    return success();
  });
}
