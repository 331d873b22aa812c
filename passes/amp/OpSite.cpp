//===- OpSite.cpp ------------------------------------------------------------===//
#include "passes/amp/OpSite.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/Path.h"

using namespace mlir;

ampc::amp::OpSite ampc::amp::siteOf(Location loc) {
  OpSite site;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      if (site.name.empty())
        site.name = name.getName().str();
    } else if (auto pos = dyn_cast<FileLineColLoc>(l)) {
      if (site.file.empty()) {
        site.file = pos.getFilename().str();
        site.line = pos.getLine();
        site.col = pos.getColumn();
      }
    }
    return WalkResult::advance();
  });
  return site;
}

std::string ampc::amp::OpSite::position(bool baseName) const {
  if (file.empty())
    return "?";
  std::string f = baseName ? llvm::sys::path::filename(file).str() : file;
  return f + ":" + std::to_string(line) + ":" + std::to_string(col);
}
