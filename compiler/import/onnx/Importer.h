//===- Importer.h - ONNX graph -> graph.model -------------------*- C++ -*-===//
//
// The ONNX front end: turns a graph read by OnnxFile.h into one graph.model
// and stops there; everything after it is the pipeline of a hand-written
// model file. Every op it creates carries the location
// NameLoc(node name, FileLineColLoc(model.onnx, 0, 0)) so diagnostics and
// `ampc explain` name the ONNX node.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_IMPORTER_H
#define AMPC_COMPILER_IMPORT_ONNX_IMPORTER_H

#include "compiler/import/onnx/OnnxFile.h"
#include "compiler/import/onnx/Weights.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ampc::onnx {

struct ImportOptions {
  std::string path;             // the .onnx file, for locations
  std::string modelName;        // graph.model symbol ("" : from the file)
  std::optional<int64_t> batch; // fixes every dynamic first dimension
  std::map<std::string, int64_t> dims; // dim_param name -> size
  // Appended loss: "" (the graph's own scalar output), "cross_entropy" or
  // "mse"; |lossOutput| names the graph output it reads, |lossLabel| the
  // new input holding the labels / targets.
  std::string loss, lossOutput, lossLabel;
  // No loss at all: the graph's outputs are returned as they are (the
  // node-test runner evaluates forward graphs).
  bool forwardOnly = false;
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<Weight> weights;
  std::vector<std::string> notes; // for the user, one line each
};

// Builds the module; on failure the diagnostics (at the node's location)
// have been emitted and the result is empty.
std::optional<ImportResult> importGraph(mlir::MLIRContext &context,
                                        const Graph &graph,
                                        const ImportOptions &options);

} // namespace ampc::onnx

#endif
