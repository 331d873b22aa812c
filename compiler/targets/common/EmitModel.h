//===- EmitModel.h - The Model class pieces every target prints -*- C++ -*-===//
//
// Both targets print one class implementing ampc::rt::Model. Its metadata
// (name, inputs, outputs, params, config, defaults), the kernel-library
// members, main(), and the binding of the training functions' arguments and
// results to C++ names follow one logic; only the storage behind them (host
// vectors, device blocks) differs, and that stays in the targets.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_COMMON_EMITMODEL_H
#define AMPC_COMPILER_TARGETS_COMMON_EMITMODEL_H

#include "compiler/targets/common/EmitSupport.h"
#include "compiler/targets/common/TargetSyntax.h"

#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"

namespace ampc::emit {

// `static ampc::rt::ModelSpec spec()`: name, inputs, outputs, parameters
// with their initializers, train.config (with its defaults) and the arena size,
// for the runtime base class (cpu::HostModel, cuda::DeviceModel).
void emitModelSpec(mlir::raw_indented_ostream &os, const Program &p,
                   const TargetSyntax &t);

// The two comment lines every generated file starts with.
void emitFileHeader(llvm::raw_ostream &os, const Program &p,
                    const TargetSyntax &t);
// Micro-batches per optimizer step (train.config accum_steps).
int64_t accumSteps(const Program &p);
// The graph ops of @grad and the model that call the kernel library, in
// order of first use.
llvm::SetVector<llvm::StringRef> libraryKernels(const Program &p);
// One member per library kernel, looked up once.
void emitKernelMembers(mlir::raw_indented_ostream &os,
                       const llvm::SetVector<llvm::StringRef> &kernels,
                       const TargetSyntax &t);
// One member per constant attribute set the library calls pass
// (AttrMembers), built with the model.
void emitAttrMembers(mlir::raw_indented_ostream &os, const AttrMembers &attrs,
                     const TargetSyntax &t);
// Closes the class and the anonymous namespace; prints main(), which
// starts with |firstStatement| when there is one.
void emitClassEndAndMain(mlir::raw_indented_ostream &os,
                         llvm::StringRef className,
                         llvm::StringRef firstStatement = "");

// Prints the pointer to model input number |index| of element type |type|
// (the target's spelling) named |name|.
using InputPrinter = llvm::function_ref<void(
    const std::string &name, const std::string &type, int index,
    mlir::Value value)>;

// Names the arguments of @grad: inputs (printed by |input|), FP32
// parameters (`float *p = weight(k);`, the model base's accessor on both
// targets) and the loss scale (|lossScale|, an expression).
mlir::LogicalResult bindGradArguments(const Program &p, BlockEnv &env,
                                      mlir::raw_indented_ostream &os,
                                      const TargetSyntax &t,
                                      llvm::StringRef lossScale,
                                      InputPrinter input);
// Names the graph.input and graph.param values of the model body, as
// bindGradArguments does.
void bindModelValues(const Program &p, BlockEnv &env,
                     mlir::raw_indented_ostream &os, const TargetSyntax &t,
                     InputPrinter input);
// Checks the results of @grad: |loss| gets the output named "loss", |grad|
// each gradient (FP32, or half: train-half-grads) with its parameter index,
// element count and name.
mlir::LogicalResult forEachGradResult(
    const Program &p, llvm::function_ref<void(mlir::Value)> loss,
    llvm::function_ref<void(mlir::Value, size_t param, int64_t count,
                            llvm::StringRef name)>
        grad);

// Binds the gradients that micro-batch 0 writes straight into the runtime's
// gradient buffers (passes/GradInPlace.h) to `grad(i)` in |env|, a half
// gradient to `halfGrad(i)`.
void bindGradsInPlace(const Program &p, BlockEnv &env);

} // namespace ampc::emit

#endif
