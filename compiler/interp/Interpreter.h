//===- Interpreter.h - Reference interpreter for graph IR --------*- C++ -*-===//
//
// Executes a graph.model (inputs and parameters bound by name) or a
// func.func of graph ops (positional arguments, e.g. the `<model>_grad`
// training step) on the CPU. It is the numerical oracle of ampc: simple
// loops, exact per-type rounding, no cleverness.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_INTERP_INTERPRETER_H
#define AMPC_COMPILER_INTERP_INTERPRETER_H

#include "compiler/interp/Tensor.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace mlir {
class Block;
class Operation;
class Value;
namespace func {
class FuncOp;
}
} // namespace mlir

namespace ampc::graph {
class ModelOp;
}

namespace ampc::interp {

enum class Numerics {
  // Every op result rounded to its element type (f32 via float, f16 as IEEE
  // binary16, bf16 RNE); GEMMs and sums accumulate in FP32.
  Typed,
  // Everything in double, element types ignored (gradient checks).
  FP64,
};

struct InterpOptions {
  Numerics numerics = Numerics::Typed;
  // Dropout masks depend on (seed, step, op key, element) only.
  uint64_t seed = 0;
  uint64_t step = 0;
};

// Rounds |x| to |type| under |numerics| (identity in FP64 or for ints).
double roundTo(double x, ElemType type, Numerics numerics);
// Rounds every element of a float tensor to its own type.
void roundTensor(Tensor &t, Numerics numerics);

using NamedTensors = std::map<std::string, Tensor>;

// Every value of one model run, kept so a rerun with one binding changed
// recomputes only what depends on it (finite differences).
struct ModelValues {
  llvm::DenseMap<mlir::Value, Tensor> values;
};

class Interpreter {
public:
  explicit Interpreter(InterpOptions options = {}) : options(options) {}
  const InterpOptions &getOptions() const { return options; }
  void setStep(uint64_t step) { options.step = step; }

  // Runs |model| with every input and parameter bound by name in |bindings|
  // and returns its outputs by name ("loss", "logits", ...). Errors are
  // reported as diagnostics at the offending op.
  mlir::FailureOr<NamedTensors> runModel(graph::ModelOp model,
                                         const NamedTensors &bindings,
                                         ModelValues *keep = nullptr);

  // Like runModel, for bindings equal to those of the run that filled
  // |base| except the one named |changed|: ops that do not depend on it take
  // their values from |base|.
  mlir::FailureOr<NamedTensors> rerunModel(graph::ModelOp model,
                                           const NamedTensors &bindings,
                                           const ModelValues &base,
                                           llvm::StringRef changed);

  // Runs |func| on positional |args| and returns its results. With |keep|,
  // every value of the run stays there (per-op statistics: ampc audit).
  mlir::FailureOr<std::vector<Tensor>> runFunction(mlir::func::FuncOp func,
                                                   llvm::ArrayRef<Tensor> args,
                                                   ModelValues *keep = nullptr);

  // Runs one op on operand values (tests, and the two entry points above).
  mlir::FailureOr<std::vector<Tensor>> runOp(mlir::Operation *op,
                                             llvm::ArrayRef<Tensor> operands);

private:
  using Env = llvm::DenseMap<mlir::Value, Tensor>;
  // Runs the ops of |block| up to its terminator, binding results in |env|.
  // With |base|, ops independent of the binding |changed| reuse its values.
  mlir::LogicalResult runBlock(mlir::Block &block, Env &env,
                               const NamedTensors *bindings,
                               const Env *base = nullptr,
                               llvm::StringRef changed = {});
  mlir::FailureOr<NamedTensors> outputsOf(graph::ModelOp model, Env &env);

  InterpOptions options;
};

} // namespace ampc::interp

#endif
