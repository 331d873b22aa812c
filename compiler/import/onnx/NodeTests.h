//===- NodeTests.h - ONNX's backend node tests as a conformance suite ----===//
//
// Each test directory (ONNX's onnx/backend/test/data/node/<test>, shipped by
// Debian's libonnx-testdata) holds model.onnx and test_data_set_0/
// {input,output}_<i>.pb. A test is imported (forward only) and run on the
// reference interpreter; outputs compare with ONNX's tolerances
// |got - want| <= atol + rtol * |want|.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_NODETESTS_H
#define AMPC_COMPILER_IMPORT_ONNX_NODETESTS_H

#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace ampc::onnx {

struct NodeTestResult {
  enum Status { Passed, Failed, OutOfScope, NotImported };
  std::string test; // directory name
  std::string op;   // op type of a one-node test; "(multi-node)" otherwise
  Status status = NotImported;
  std::string reason; // why it failed or is out of scope
};

NodeTestResult runNodeTest(mlir::MLIRContext &context, const std::string &dir,
                           double rtol, double atol);

// Runs every test under |root| (filtered by a substring of the test name);
// prints the per-op table and the failures; returns the number of failures.
int runNodeTests(mlir::MLIRContext &context, const std::string &root,
                 const std::string &filter, double rtol, double atol,
                 bool verbose);

} // namespace ampc::onnx

#endif
