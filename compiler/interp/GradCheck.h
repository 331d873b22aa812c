//===- GradCheck.h - Autodiff gradients vs central differences ---*- C++ -*-===//
//
// Evaluates a model's `<model>_grad` function (the autodiff contract in
// docs/ARCHITECTURE.md) in FP64 on seeded random inputs and parameters and
// compares every parameter gradient with central finite differences of the
// model's loss.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_INTERP_GRADCHECK_H
#define AMPC_COMPILER_INTERP_GRADCHECK_H

#include "compiler/interp/Interpreter.h"
#include "runtime/numerics/Init.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc::interp {

struct GradCheckOptions {
  uint64_t seed = 0;
  uint64_t step = 0;      // dropout step (masks stay fixed for all runs)
  double eps = 1e-6;      // central-difference step
  double atol = 1e-5;     // pass if |analytic - numeric| <= atol + rtol |numeric|
  double rtol = 1e-3;
  int64_t maxProbes = 20; // elements probed per parameter
};

struct GradCheckRow {
  std::string name;
  int64_t probes = 0;
  double maxAbs = 0, maxRel = 0;
  bool ok = true;
};

struct GradCheckReport {
  std::vector<GradCheckRow> rows;
  // Loss computed by the model and by the _grad function: they must agree.
  double modelLoss = 0, gradLoss = 0;
  bool lossOk = true;
  bool ok() const;
};

// The runtime's description of a #graph initializer attribute (unknown
// ones: N(0, 1)), as the training binary resolves it.
num::InitAttrs initAttrsOf(mlir::Attribute init);

// Random values for every input and parameter of |model|, seeded: float
// inputs N(0, 1); integer inputs uniform in [0, n) with n derived from their
// consumers (classes of a cross_entropy, rows of an embedding table);
// parameters from their initializer, plus N(0, 0.5^2) for constant
// initializers so zeros and ones hide no error.
NamedTensors makeRandomBindings(graph::ModelOp model, uint64_t seed);

// Runs the check; |gradFunc| is the model's `_grad` function. Errors in the
// IR are reported as diagnostics.
mlir::FailureOr<GradCheckReport> runGradCheck(graph::ModelOp model,
                                              mlir::func::FuncOp gradFunc,
                                              const GradCheckOptions &options);

void printGradCheckReport(const GradCheckReport &report,
                          const GradCheckOptions &options,
                          llvm::raw_ostream &os);

} // namespace ampc::interp

#endif
