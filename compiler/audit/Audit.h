//===- Audit.h - Per-op range and error audit of an AMP step ----*- C++ -*-===//
//
// Runs a model's `<model>_grad` function (after graph-autocast and
// graph-autodiff) twice per batch on the reference interpreter: in typed
// numerics (the AMP placement, exact half rounding, the loss scale seeding
// the backward pass as in training) and in FP64 from the same weights and
// data. Every float op result, forward and backward, is compared value by
// value; each op is also run alone on FP64 inputs rounded to its operand
// types, which is the error it adds by itself. Reads the IR, changes nothing
// (annotate() is the exception, for --dump-ir).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_AUDIT_AUDIT_H
#define AMPC_COMPILER_AUDIT_AUDIT_H

#include "compiler/audit/Stats.h"
#include "compiler/interp/Interpreter.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace ampc::audit {

// Thresholds of the verdict (docs/audit.md explains them).
// An op is at risk when any of its values overflows its type (in FP64,
// before rounding: the op's own doing), when more than this fraction of its
// nonzero values lies below the type's smallest normal, ...
constexpr double kUnderflowRisk = 0.01;
// ... or when the median relative error it adds by itself is more than this
// many unit roundoffs of its result type (it amplifies the rounding of its
// inputs, as exp of large arguments does).
constexpr double kLocalErrorRisk = 8.0;
// The loss-scale range allows at most this fraction of the nonzero
// half-precision gradient values to underflow.
constexpr double kScaleUnderflowTolerance = 0.001;

struct AuditOptions {
  std::string mode = "fp16"; // the half type: fp16 or bf16
  double lossScale = 65536;
  uint64_t seed = 0; // dropout masks
  uint64_t step = 0;
};

enum class Risk { None, Precision, Underflow, Overflow };
const char *toString(Risk risk);

// One float result of one op of `<model>_grad`.
struct OpRow {
  mlir::Operation *op = nullptr;
  unsigned result = 0;
  std::string loc;       // file:line:col as in the IR
  std::string shortLoc;  // with the file's base name
  std::string opName;    // "linear" ("layer_norm_backward#1" for result 1)
  std::string name;      // the model file's name of the op, or ""
  std::string type;      // "f16"
  std::string precision; // amp.precision, or ""
  bool backward = false; // depends on the loss scale: a (scaled) gradient
  double limit = 0;      // the type's largest finite value
  // Of the least precise float type among the result and the operands: the
  // rounding the op cannot avoid.
  double unitRoundoff = 0;
  ValueStats acc;   // the AMP run against FP64: error accumulated up to here
  ValueStats local; // the op alone on FP64 inputs
  Risk risk = Risk::None;
  std::string why; // one line, when at risk
  std::string fix; // what to do, when at risk
};

// The loss scales that keep every half-precision gradient value
// representable: no overflow, at most kScaleUnderflowTolerance underflow.
struct ScaleAdvice {
  double scale = 1;             // the scale the audit ran at
  int64_t values = 0;           // significant half gradient values (Stats.h)
  int64_t overflow = 0;         // at |scale|, values beyond the type's limit
  double underflowFraction = 0; // at |scale|, of the significant values
  double maxUnscaled = 0;       // max |gradient| / scale
  bool hasRange = false;
  int lo = 0, hi = 0; // the range is [2^lo, 2^hi]
  bool scaleInRange = true;
};

struct AuditReport {
  std::string model, mode, policy;
  std::string data;    // where the batches came from
  std::string weights; // where the weights came from
  int64_t batches = 0;
  double lossAmp = 0, lossRef = 0; // mean over batches
  std::vector<OpRow> rows;         // program order
  ScaleAdvice scale;
  // Indices into rows of the ops at risk, riskiest first.
  std::vector<size_t> ranked;
};

// Accumulates batches; finish() ranks and advises.
class Auditor {
public:
  Auditor(graph::ModelOp model, mlir::func::FuncOp gradFunc,
          AuditOptions options);

  // One batch: |inputs| by input name, |weights| by parameter name.
  mlir::LogicalResult addBatch(const interp::NamedTensors &inputs,
                               const interp::NamedTensors &weights);
  AuditReport finish();

private:
  graph::ModelOp model;
  mlir::func::FuncOp gradFunc;
  AuditOptions options;
  AuditReport report;
  llvm::DenseMap<std::pair<mlir::Operation *, unsigned>, size_t> rowOf;
  MagnitudeHistogram gradients;
  double lossAmpSum = 0, lossRefSum = 0;
  interp::ElemType halfType;
};

// Writes each row's statistics as an `audit` attribute on its op
// (`audit.resultK` for result K > 0).
void annotate(const AuditReport &report);

void printAuditText(const AuditReport &report, llvm::raw_ostream &os);
void printAuditJson(const AuditReport &report, llvm::raw_ostream &os);

} // namespace ampc::audit

#endif
