//===- EmitSupport.h - Pieces every target emitter shares -------*- C++ -*-===//
//
// The CPU and CUDA emitters print the same program (the module after the
// training pipeline) in two dialects of C++. What does not depend on the
// target lives here: finding the program's pieces, names, literals, shapes,
// the broadcasting index of a fused operand, the C++ names of SSA values.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGETS_COMMON_EMITSUPPORT_H
#define AMPC_COMPILER_TARGETS_COMMON_EMITSUPPORT_H

#include "dialects/Graph/GraphOps.h"
#include "dialects/Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace ampc::emit {

// The pieces of a module after the training pipeline.
struct Program {
  graph::ModelOp model;
  mlir::func::FuncOp grad; // @<model>_grad: forwardBackward()
  mlir::func::FuncOp step; // @<model>_step: step()
  train::FusedEpilogueOp epilogue;
  train::ConfigAttr config; // train.config of @<model>_step
  llvm::SmallVector<std::string> paramNames;
  // The index of each name in paramNames (its first, should one repeat).
  llvm::StringMap<size_t> paramIndex;
  std::optional<size_t> indexOfParam(llvm::StringRef name) const {
    auto it = paramIndex.find(name);
    if (it == paramIndex.end())
      return std::nullopt;
    return it->second;
  }
};

// Finds the model, @<m>_grad, @<m>_step, its fused epilogue and its
// train.config.
mlir::LogicalResult collect(mlir::ModuleOp module, Program &p);

// C++ element type of |type|'s elements: float, half, bf16, int32_t, ...
std::string cppElementType(mlir::Type type);
// ampc::rt::DType enumerator: "DType::F16".
std::string dtypeOf(mlir::Type type);
// A C++ identifier made of |name| (dots and other signs become '_').
std::string identifier(llvm::StringRef name);
// A C++ double literal that reads back as |value| (inf and NaN included).
std::string doubleLiteral(double value);
// A C++ float literal that reads back as |value| ("0.001f").
std::string floatLiteral(float value);
// "{128, 784}".
std::string shapeList(llvm::ArrayRef<int64_t> shape);
// Bytes of a ranked tensor.
int64_t byteSize(mlir::Type type);
// The member holding the kernel of graph op |opName|: "k_linear_".
std::string kernelMember(llvm::StringRef opName);
// "mlp" -> "MlpModel".
std::string className(llvm::StringRef model);
// A C++ string literal of any bytes, made of printable ASCII only.
std::string quoted(llvm::StringRef s);
// |s| as text of a // comment: as is when it is printable ASCII and does not
// end in a backslash (which would splice the next line into the comment),
// else quoted(s).
std::string commentText(llvm::StringRef s);
// ampc::num::InitAttrs{...} of a #graph initializer.
std::string initAttrs(mlir::Attribute init);
// kernel.arena_size of |op| (0 when absent).
int64_t arenaSize(mlir::Operation *op);
// A constant element (FloatAttr or IntegerAttr) as |type|(literal).
std::string elementLiteral(mlir::Attribute a, const std::string &type);

// The index expression of an operand of shape |in| read by a loop index
// `i` over |out| (numpy broadcasting): "i", "0", "i % 64", ...
std::string broadcastIndex(llvm::ArrayRef<int64_t> in,
                           llvm::ArrayRef<int64_t> out);

// The constant attribute sets of the library calls in one file, each built
// once as a member of the model class (`attrs3_`) and shared by every call
// that passes the same set. Function-local statics did the same at run time,
// but a step function full of guarded static initializers took GCC twice as
// long to compile (llama_tiny: 7.5 s -> 3.6 s at -O2).
struct AttrMembers {
  // The member passing the attributes |init| ("{{\"eps\", 1e-05}}").
  std::string member(llvm::StringRef init);
  // initializer -> member name, in order of first use.
  llvm::MapVector<std::string, std::string,
                  std::map<std::string, unsigned>>
      byInit;
};

// Names the C++ pointer variable of every tensor value in one function.
struct BlockEnv {
  mlir::AsmState *asmState = nullptr;
  llvm::DenseMap<mlir::Value, std::string> names;
  llvm::StringSet<> used;
  bool training = true;       // dropout is the identity in evaluate()
  std::string dropoutStep;    // C++ expression of the dropout step counter
  AttrMembers *attrMembers = nullptr; // the file's, shared by its functions
  // Values that micro-batch 0 writes elsewhere than the arena: the C++
  // pointer expression (the gradients of passes/GradInPlace.h: "grad(3)").
  llvm::DenseMap<mlir::Value, std::string> inPlace;
  // Statements printed right after an op's own (EmitGradResults.h: the
  // gradients' storeGrad and gradReady at their ready points).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<std::function<void()>, 1>>
      after;

  // A fresh identifier based on |hint|.
  std::string fresh(llvm::StringRef hint);
  // The pointer variable of |v| (asserts it was declared).
  const std::string &operator[](mlir::Value v) const;
  // The SSA name |v| prints with ("%4", "%arg2"), for comments.
  std::string ssaName(mlir::Value v) const;
};

} // namespace ampc::emit

#endif
