//===- Kernel.h - The interpreter's per-op kernels ---------------*- C++ -*-===//
//
// A kernel computes one op's results from its operand values. Kernels look
// attributes up by name on the generic Operation (defaults as in the .td
// files), so backward ops defined elsewhere need no C++ class here. Kernels
// return values in double; the interpreter rounds every float result to its
// element type afterwards (typed numerics). The only rounding a kernel does
// itself is that of FP32 accumulators (Accum), as GEMMs and sums do.
//
// One file per op family registers its kernels; adding an op means adding
// a function and one line in that file's register function.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_INTERP_KERNEL_H
#define AMPC_COMPILER_INTERP_KERNEL_H

#include "compiler/interp/Interpreter.h"
#include "compiler/interp/Tensor.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <span>

namespace ampc::interp {

// What a kernel sees of its op: attributes, result types, run options.
class OpContext {
public:
  OpContext(mlir::Operation *op, const InterpOptions &options)
      : op(op), options(options) {}

  mlir::Operation *getOp() const { return op; }
  const InterpOptions &getOptions() const { return options; }
  // True when sums and GEMMs accumulate in a float (typed numerics).
  bool fp32Accumulate() const { return options.numerics == Numerics::Typed; }

  int64_t getInt(llvm::StringRef name, int64_t dflt) const;
  double getFloat(llvm::StringRef name, double dflt) const;
  std::optional<double> getOptionalFloat(llvm::StringRef name) const;
  std::string getString(llvm::StringRef name, llvm::StringRef dflt) const;
  // A unit or bool attribute: true if present (and true).
  bool getFlag(llvm::StringRef name) const;
  std::vector<int64_t> getInts(llvm::StringRef name,
                               std::vector<int64_t> dflt) const;
  std::optional<std::vector<int64_t>>
  getOptionalInts(llvm::StringRef name) const;

  unsigned getNumResults() const;
  Shape resultShape(unsigned k = 0) const;
  ElemType resultType(unsigned k = 0) const;
  // A zero tensor of result |k|'s type.
  Tensor makeResult(unsigned k = 0) const {
    return Tensor(resultShape(k), resultType(k));
  }

  // Reports an error at the op; kernels return `failure()` after it.
  mlir::InFlightDiagnostic error() const;

private:
  mlir::Operation *op;
  const InterpOptions &options;
};

// A running sum that rounds to float after every addition when asked
// (FP32 accumulation), else sums in double.
class Accum {
public:
  explicit Accum(bool fp32) : fp32(fp32) {}
  explicit Accum(const OpContext &ctx) : fp32(ctx.fp32Accumulate()) {}
  void add(double x) {
    sum += x;
    if (fp32)
      sum = double(float(sum));
  }
  double get() const { return sum; }

private:
  bool fp32;
  double sum = 0;
};

// Adds |x| into |slot| with the accumulation precision of |ctx|.
inline void accumulate(const OpContext &ctx, double &slot, double x) {
  slot += x;
  if (ctx.fp32Accumulate())
    slot = double(float(slot));
}

using KernelResult = mlir::FailureOr<std::vector<Tensor>>;
using Kernel = KernelResult (*)(const OpContext &ctx,
                                std::span<const Tensor> in);
using KernelTable = llvm::StringMap<Kernel>;

// The table of every kernel, keyed by op name ("graph.linear").
const KernelTable &kernelTable();

// Per-family registration (kernels/*.cpp).
void registerElementwiseKernels(KernelTable &table);
void registerLinalgKernels(KernelTable &table);
void registerConvPoolKernels(KernelTable &table);
void registerNormalizationKernels(KernelTable &table);
void registerReductionKernels(KernelTable &table);
void registerShapeKernels(KernelTable &table);
void registerLossKernels(KernelTable &table);
void registerAttentionKernels(KernelTable &table);
void registerBatchNormKernels(KernelTable &table);
void registerLossIndexKernels(KernelTable &table);
void registerResampleKernels(KernelTable &table);
void registerConvTransposeKernels(KernelTable &table);

// Normalises a possibly negative axis; -1 if out of range.
inline int64_t normAxis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  return a >= 0 && a < rank ? a : -1;
}

// Shorthand for a single-result kernel.
inline KernelResult one(Tensor t) {
  std::vector<Tensor> v;
  v.push_back(std::move(t));
  return v;
}

// Shorthand for a kernel with several results, in order.
template <typename... Ts> KernelResult several(Ts... ts) {
  std::vector<Tensor> v;
  (v.push_back(std::move(ts)), ...);
  return v;
}

} // namespace ampc::interp

#endif
