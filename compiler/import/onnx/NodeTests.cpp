//===- NodeTests.cpp - Import + interpret ONNX's node tests
//-----------------===//
#include "compiler/import/onnx/NodeTests.h"
#include "compiler/import/onnx/ImportState.h"
#include "compiler/import/onnx/Importer.h"
#include "compiler/interp/Interpreter.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

using namespace mlir;

namespace ampc::onnx {
namespace {

std::optional<interp::ElemType> interpType(int32_t t) {
  switch (t) {
  case kFloat:
  case kDouble:
    return interp::ElemType::F32;
  case kFloat16:
    return interp::ElemType::F16;
  case kBfloat16:
    return interp::ElemType::BF16;
  case kInt32:
    return interp::ElemType::I32;
  case kInt64:
  case kBool:
    return interp::ElemType::I64;
  default:
    return std::nullopt;
  }
}

// Older test data stores BFLOAT16 tensors as their UINT16 bits.
void bitsToBf16(Tensor &t) {
  t.type = kBfloat16;
  for (int64_t bits : t.i) {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    t.f.push_back(f);
  }
  t.i.clear();
}

// Tests whose expected data follow other semantics than ONNX's current
// specification, with the reason.
const char *knownDivergence(const std::string &test) {
  if (test.find("FLOAT_to_BFLOAT16") != std::string::npos)
    return "the test data truncates to bfloat16 (ONNX 1.12's reference); "
           "ampc rounds to nearest even like PyTorch";
  if (test == "test_resize_downsample_scales_linear_align_corners")
    return "the test data divide by the unrounded output width (4 x 0.6 = "
           "2.4, ONNX 1.12's reference); ampc divides by the output size 2, "
           "as PyTorch's align_corners kernel does";
  if (test.find("training_dropout") != std::string::npos &&
      test.find("zero_ratio") == std::string::npos)
    return "training-mode dropout masks come from ampc's Philox stream, the "
           "test data's from numpy's generator";
  return nullptr;
}

// True if a node reads |name| where the importer wants a constant.
bool importTimeOperand(const Graph &g, const std::string &name) {
  for (const Node &n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != name)
        continue;
      if ((n.opType == "Pow" && i == 1) || (n.opType == "Dropout" && i >= 1) ||
          (n.opType == "Clip" && i >= 1) || n.opType == "Range" ||
          ((n.opType == "Resize" || n.opType == "Upsample") && i >= 1))
        return true;
    }
  return false;
}

std::string join(const std::string &a, const std::string &b) {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  return std::string(p);
}

std::string compare(const interp::Tensor &got, const Tensor &want, double rtol,
                    double atol) {
  std::vector<int64_t> gs(got.shape.begin(), got.shape.end());
  if (gs != want.shape)
    return "shape mismatch";
  bool isF = isFloatType(want.type);
  for (int64_t k = 0; k < want.numel(); ++k) {
    double g = got.at(k), w = isF ? want.f[k] : double(want.i[k]);
    if (std::isnan(w) && std::isnan(g))
      continue;
    if (g == w)
      continue;
    if (!isF || !(std::abs(g - w) <= atol + rtol * std::abs(w)))
      return "element " + std::to_string(k) + ": got " + std::to_string(g) +
             ", want " + std::to_string(w);
  }
  return "";
}

} // namespace

NodeTestResult runNodeTest(MLIRContext &context, const std::string &dir,
                           double rtol, double atol) {
  NodeTestResult r;
  r.test = llvm::sys::path::filename(dir).str();
  Graph g;
  std::string error;
  if (!readModel(join(dir, "model.onnx"), g, error)) {
    r.status = NodeTestResult::OutOfScope;
    r.reason = error;
    return r;
  }
  r.op = g.nodes.size() == 1 ? g.nodes[0].opType : "(multi-node)";
  for (const Node &n : g.nodes)
    if (!opTable().count(n.opType))
      return r; // NotImported
  if (const char *why = knownDivergence(r.test)) {
    r.status = NodeTestResult::OutOfScope;
    r.reason = why;
    return r;
  }
  std::string data = join(dir, "test_data_set_0");
  interp::NamedTensors bindings;
  size_t k = 0;
  std::vector<ValueInfo> graphInputs;
  for (const ValueInfo &in : g.inputs) {
    Tensor t;
    if (!readTensor(join(data, "input_" + std::to_string(k++) + ".pb"), t,
                    error)) {
      r.status = NodeTestResult::OutOfScope;
      r.reason = "input: " + error;
      return r;
    }
    if (in.type == kBfloat16 && t.type == kUint16)
      bitsToBf16(t);
    // Integer inputs (shapes, axes, indices) and the float operands the
    // importer needs at import time (a Pow exponent, a Dropout ratio, Range
    // bounds) are constants in exported models; the tests feed them as
    // inputs.
    if (!isFloatType(t.type) || importTimeOperand(g, in.name)) {
      t.name = in.name;
      g.initializers.push_back(std::move(t));
      continue;
    }
    graphInputs.push_back(in);
    std::optional<interp::ElemType> type = interpType(t.type);
    if (!type) {
      r.status = NodeTestResult::OutOfScope;
      r.reason = std::string("input type ") + dataTypeName(t.type);
      return r;
    }
    interp::Tensor v;
    v.shape.assign(t.shape.begin(), t.shape.end());
    v.type = *type;
    v.f = t.f;
    v.i = t.i;
    bindings[in.name] = std::move(v);
  }
  g.inputs = graphInputs;

  // The first error of the import is the reason it is out of scope.
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (firstError.empty())
      firstError = d.str();
    return success();
  });
  ImportOptions options;
  options.path = r.test + ".onnx";
  options.forwardOnly = true;
  std::optional<ImportResult> imported = importGraph(context, g, options);
  if (!imported) {
    r.status = NodeTestResult::OutOfScope;
    r.reason = firstError;
    return r;
  }
  auto model = *imported->module->getOps<graph::ModelOp>().begin();
  for (graph::InputOp in : model.getBlock().getOps<graph::InputOp>()) {
    auto shape = cast<RankedTensorType>(in.getType()).getShape();
    const interp::Tensor &t = bindings.at(in.getName().str());
    if (!llvm::equal(shape, t.shape)) {
      r.status = NodeTestResult::OutOfScope;
      r.reason = "input '" + in.getName().str() +
                 "' data has another shape than the graph declares";
      return r;
    }
  }
  interp::Interpreter interpreter;
  FailureOr<interp::NamedTensors> outs = interpreter.runModel(model, bindings);
  if (failed(outs)) {
    r.status = NodeTestResult::Failed;
    r.reason = "interpreter: " + firstError;
    return r;
  }
  auto names = model.getOutputOp().getNames();
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    Tensor want;
    if (!readTensor(join(data, "output_" + std::to_string(i) + ".pb"), want,
                    error)) {
      r.status = NodeTestResult::OutOfScope;
      r.reason = "output: " + error;
      return r;
    }
    if (g.outputs[i].type == kBfloat16 && want.type == kUint16)
      bitsToBf16(want);
    std::string name = cast<StringAttr>(names[i + 1]).str();
    std::string diff = compare(outs->at(name), want, rtol, atol);
    if (!diff.empty()) {
      r.status = NodeTestResult::Failed;
      r.reason = "output " + std::to_string(i) + ": " + diff;
      return r;
    }
  }
  r.status = NodeTestResult::Passed;
  return r;
}

int runNodeTests(MLIRContext &context, const std::string &root,
                 const std::string &filter, double rtol, double atol,
                 bool verbose) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::is_directory(it->path()) &&
        llvm::sys::path::filename(it->path()).contains(filter))
      dirs.push_back(it->path());
  if (ec || dirs.empty()) {
    llvm::errs() << "ampc onnx-node-tests: no tests under '" << root << "'\n";
    return -1;
  }
  std::sort(dirs.begin(), dirs.end());
  struct Row {
    int passed = 0, failed = 0, outOfScope = 0;
    std::set<std::string> reasons;
  };
  std::map<std::string, Row> rows;
  std::vector<NodeTestResult> failures;
  for (const std::string &dir : dirs) {
    NodeTestResult r = runNodeTest(context, dir, rtol, atol);
    if (r.status == NodeTestResult::NotImported)
      continue;
    Row &row = rows[r.op];
    if (verbose)
      llvm::outs() << r.test << ": "
                   << (r.status == NodeTestResult::Passed   ? "passed"
                       : r.status == NodeTestResult::Failed ? "FAILED"
                                                            : "out of scope")
                   << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n";
    switch (r.status) {
    case NodeTestResult::Passed:
      ++row.passed;
      break;
    case NodeTestResult::Failed:
      ++row.failed;
      failures.push_back(r);
      break;
    default:
      ++row.outOfScope;
      row.reasons.insert(r.test + ": " + r.reason);
      break;
    }
  }
  llvm::outs()
      << "| op | passed | failed | out of scope |\n|---|---|---|---|\n";
  int total[3] = {0, 0, 0};
  for (auto &[op, row] : rows) {
    llvm::outs() << "| " << op << " | " << row.passed << " | " << row.failed
                 << " | " << row.outOfScope << " |\n";
    total[0] += row.passed;
    total[1] += row.failed;
    total[2] += row.outOfScope;
  }
  llvm::outs() << "| total | " << total[0] << " | " << total[1] << " | "
               << total[2] << " |\n";
  llvm::outs() << "\nOut of scope:\n";
  for (auto &[op, row] : rows)
    for (const std::string &why : row.reasons)
      llvm::outs() << "  " << why << "\n";
  for (const NodeTestResult &f : failures)
    llvm::outs() << "FAILED " << f.test << ": " << f.reason << "\n";
  return int(failures.size());
}

} // namespace ampc::onnx
