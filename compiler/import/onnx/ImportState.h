//===- ImportState.h - What the ONNX op importers share ---------*- C++ -*-===//
//
// One ImportState per import. ONNX values are either graph values (an MLIR
// Value) or values known at import time (constants, initializers that are
// not parameters, shapes): the latter stay host tensors so shape-computing
// chains (Shape -> Gather -> Concat -> Reshape) fold, and become a
// graph.constant only when a graph op reads them.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_IMPORTSTATE_H
#define AMPC_COMPILER_IMPORT_ONNX_IMPORTSTATE_H

#include "compiler/import/onnx/OnnxFile.h"
#include "compiler/import/onnx/Weights.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

namespace ampc::onnx {

class ImportState {
public:
  ImportState(mlir::OpBuilder &builder, std::string file, int64_t opset)
      : b(builder), file(std::move(file)), opset(opset) {}

  mlir::OpBuilder &b;
  std::string file;
  int64_t opset;
  const Node *node = nullptr; // the node being imported
  int64_t nextDropoutKey = 0;
  // A model imported for training (not a forward-only node test): Batch-
  // Normalization becomes graph.batch_norm, its running statistics
  // graph.buffer state whose values join |weights| (the --weights file).
  bool forTraining = false;
  std::vector<Weight> *weights = nullptr;

  mlir::MLIRContext *ctx() { return b.getContext(); }
  // The location of |node| (or of the file when none).
  mlir::Location loc();
  // NameLoc(|name|, the file): graph inputs and parameters.
  mlir::Location namedLoc(llvm::StringRef name);
  // Emits an error at the node naming it and its op type; returns failure.
  mlir::LogicalResult error(const llvm::Twine &msg);

  // Values by ONNX name.
  void set(const std::string &name, mlir::Value v) { values[name] = v; }
  // An ONNX sequence as SplitToSequence makes one: chunks [start, start +
  // size) of |source| along |axis| (the axis dropped when |squeeze|). A
  // chunk becomes a graph.slice only when SequenceAt reads it.
  struct Sequence {
    mlir::Value source;
    int64_t axis = 0;
    bool squeeze = false;
    std::vector<std::pair<int64_t, int64_t>> chunks; // (start, size)
  };
  void setSequence(const std::string &name, Sequence seq) {
    sequences[name] = std::move(seq);
  }
  // Null when |name| is not a sequence.
  const Sequence *sequence(const std::string &name) const;
  void setConst(const std::string &name, Tensor t);
  bool has(const std::string &name) const;
  // The host tensor of a value known at import time, or null.
  const Tensor *constant(const std::string &name) const;
  // The graph value (materialising a constant as graph.constant); fails with
  // a message when |name| is unknown or of a type the graph cannot hold.
  mlir::FailureOr<mlir::Value> get(const std::string &name);
  // The node's input |i| (empty when omitted).
  bool hasInput(unsigned i) const;
  mlir::FailureOr<mlir::Value> input(unsigned i);
  const Tensor *constInput(unsigned i) const;
  // Constant integer list from input |i| (Reshape's shape, axes, ...).
  mlir::FailureOr<std::vector<int64_t>> intsInput(unsigned i,
                                                  llvm::StringRef what);

  // |axis| (negative: from the end) of a rank-|rank| value made
  // non-negative; an error at the node when out of range.
  mlir::FailureOr<int64_t> normAxis(int64_t axis, int64_t rank);

  // Attributes of the node, with defaults.
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const;
  double floatAttr(llvm::StringRef name, double dflt) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const;
  // The first attribute read with a kind other than the one asked for
  // ("attribute 'alpha' must be a float"); the getters return the default.
  mutable std::string attrKindError;
  // Fails naming every attribute of the node not in |known|.
  mlir::LogicalResult onlyAttrs(std::initializer_list<llvm::StringRef> known);

  // Creates graph op |opName| with inferred result type (or |resultType|
  // when given); a failed inference reports at the node.
  mlir::FailureOr<mlir::Value>
  emit(llvm::StringRef opName, mlir::ValueRange operands,
       llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
       mlir::Type resultType = {});
  // Sets the node's output |i|.
  void result(unsigned i, mlir::Value v) { set(node->outputs.at(i), v); }

  mlir::Value constantOf(const Tensor &t);
  // A graph.constant of |shape| holding |v| everywhere (one value stored).
  mlir::FailureOr<mlir::Value> splat(int32_t onnxType,
                                     const std::vector<int64_t> &shape,
                                     double v);
  mlir::FailureOr<mlir::Type> elementType(int32_t onnxType);
  // The ONNX type of input |i| (a known tensor's, or the graph value's
  // element type); kUndefined when it has none ampc knows.
  int32_t onnxTypeOfInput(unsigned i);
  mlir::NamedAttribute attr(llvm::StringRef name, mlir::Attribute value) {
    return b.getNamedAttr(name, value);
  }

  // The graph's data flow, for multi-node patterns (Attention.cpp): the
  // node producing a value (null for inputs and initializers) and how many
  // node inputs and graph outputs read it.
  void indexGraph(const std::vector<Node> &nodes,
                  const std::vector<ValueInfo> &outputs);
  const Node *producerOf(const std::string &name) const;
  int usesOf(const std::string &name) const;
  // Erases the ops that defined |names| once nothing reads them (repeatedly,
  // so chains go), and forgets those graph values; constants stay known.
  void eraseUnused(const std::vector<std::string> &names);

private:
  const Attribute *attrOfKind(llvm::StringRef name, int kind,
                              const char *kindName) const;
  std::map<std::string, mlir::Value> values;
  std::map<std::string, Tensor> consts;
  std::map<std::string, Sequence> sequences;
  std::map<std::string, const Node *> producers;
  std::map<std::string, int> uses;
};

// A limit of the importer itself, thrown where a size is computed and
// reported at the node as it is (Importer.cpp).
struct ImportLimit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The most elements a tensor computed at import time may have: 2^26, a
// causal mask for 8192 tokens (512 MiB as the host's doubles). A negative
// dimension or a larger tensor (a 512 KB file folded to 2^30 elements ran
// out of memory) throws ImportLimit.
constexpr int64_t kMaxFoldElements = int64_t(1) << 26;
void checkFoldShape(const std::vector<int64_t> &shape);

using OpImporter = std::function<mlir::LogicalResult(ImportState &)>;
using OpTable = llvm::StringMap<OpImporter>;

// Every op type the importer knows, by ONNX op type.
const OpTable &opTable();

// One per op family (a file each).
// "[2, 3]" of a graph value's or attribute's shape, for messages.
std::string shapeString(llvm::ArrayRef<int64_t> shape);

void registerElementwiseOps(OpTable &table);
void registerLinalgOps(OpTable &table);
void registerShapeOps(OpTable &table);
void registerNormOps(OpTable &table);
void registerConvOps(OpTable &table);
void registerReduceOps(OpTable &table);
void registerSliceOps(OpTable &table);
void registerFoldOnlyOps(OpTable &table);
void registerEinsumOps(OpTable &table);
void registerResizeOps(OpTable &table);
void registerIndexingOps(OpTable &table);
void registerRecurrentOps(OpTable &table);
void registerSequenceOps(OpTable &table);

// Computes the node on the host when all its inputs are known at import
// time (Fold.cpp): true if it did.
mlir::FailureOr<bool> foldAtImport(ImportState &s);
// Imports the exporters' attention subgraph ending at this MatMul as one
// graph.scaled_dot_product_attention (Attention.cpp): true if it matched.
mlir::FailureOr<bool> importAttention(ImportState &s);
// nn.Linear as the TorchScript exporter writes it for N-D inputs,
// MatMul(x, Transpose(W)) then Add(bias), as graph.linear (Linear.cpp).
mlir::FailureOr<bool> importLinear(ImportState &s);
mlir::FailureOr<bool> importLinearBias(ImportState &s);

// The shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
mlir::Type elementTypeOf(mlir::Value v);

// |x| as |shape| (graph.reshape; |x| itself when it has that shape).
mlir::FailureOr<mlir::Value> reshapeTo(ImportState &s, mlir::Value x,
                                       llvm::ArrayRef<int64_t> shape);
// Elements start, start + step, ... below |limit| of |x|'s |axis| (a
// graph.slice keeping the other axes whole; |x| itself for the whole axis).
mlir::FailureOr<mlir::Value> sliceAxis(ImportState &s, mlir::Value x,
                                       int64_t axis, int64_t start,
                                       int64_t limit, int64_t step = 1);

} // namespace ampc::onnx

#endif
