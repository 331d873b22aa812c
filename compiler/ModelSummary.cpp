//===- ModelSummary.cpp ------------------------------------------------------===//
#include "compiler/ModelSummary.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ampc::graph;

namespace {
std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

// 1234567 -> "1,234,567".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string initName(Attribute init) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << init;
  // "#graph.kaiming_uniform<...>" -> "kaiming_uniform<...>"
  StringRef str(s);
  str.consume_front("#graph.");
  return str.str();
}
} // namespace

void ampc::printModelSummary(ModelOp model, llvm::raw_ostream &os) {
  os << "model @" << model.getSymName() << "\n";
  size_t width = 4;
  for (Operation &op : model.getBlock()) {
    if (auto in = dyn_cast<InputOp>(op))
      width = std::max(width, in.getName().size());
    if (auto p = dyn_cast<ParamOp>(op))
      width = std::max(width, p.getName().size());
    if (auto b = dyn_cast<BufferOp>(op))
      width = std::max(width, b.getName().size());
  }

  os << "\ninputs:\n";
  for (auto in : model.getBlock().getOps<InputOp>())
    os << "  " << llvm::left_justify(in.getName(), width) << "  "
       << in.getType() << "\n";

  os << "\nparameters:\n";
  int64_t total = 0, count = 0;
  for (auto p : model.getBlock().getOps<ParamOp>()) {
    auto type = cast<RankedTensorType>(p.getType());
    int64_t n = type.getNumElements();
    total += n;
    ++count;
    std::string shape;
    llvm::raw_string_ostream ss(shape);
    llvm::interleave(type.getShape(), ss, "x");
    if (type.getRank() == 0)
      shape = "scalar";
    os << "  " << llvm::left_justify(p.getName(), width) << "  "
       << llvm::left_justify(shape, 14) << llvm::right_justify(grouped(n), 13)
       << "  " << initName(p.getInit()) << "\n";
  }
  os << "\n" << count << " parameter tensors, " << grouped(total)
     << " parameters ("
     << llvm::format("%.2f", double(total) * 4.0 / (1024.0 * 1024.0))
     << " MiB in fp32)\n";
  if (!model.getBlock().getOps<BufferOp>().empty()) {
    os << "\nbuffers (state, not trained):\n";
    for (auto b : model.getBlock().getOps<BufferOp>()) {
      auto type = cast<RankedTensorType>(b.getType());
      std::string shape;
      llvm::raw_string_ostream ss(shape);
      llvm::interleave(type.getShape(), ss, "x");
      os << "  " << llvm::left_justify(b.getName(), width) << "  "
         << llvm::left_justify(shape, 14)
         << llvm::right_justify(grouped(type.getNumElements()), 13) << "  "
         << initName(b.getInit()) << "\n";
    }
  }

  OutputOp out = model.getOutputOp();
  os << "outputs: ";
  llvm::interleaveComma(llvm::zip(out.getNames(), out.getValues()), os,
                        [&](auto it) {
                          auto [name, value] = it;
                          os << cast<StringAttr>(name).getValue() << " "
                             << value.getType();
                        });
  os << "\n";

  llvm::MapVector<StringRef, int> histogram;
  int ops = 0;
  model.walk([&](Operation *op) {
    if (isa<ModelOp, InputOp, ParamOp, BufferOp, OutputOp>(op))
      return;
    ++histogram[op->getName().stripDialect()];
    ++ops;
  });
  os << "ops: " << ops << " (";
  llvm::interleaveComma(histogram, os, [&](auto &kv) {
    os << kv.first << " x" << kv.second;
  });
  os << ")\n";
}
