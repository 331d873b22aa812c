//===- Patterns.h - Multi-node ONNX patterns imported as one op -*- C++ -*-===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_PATTERNS_H
#define AMPC_COMPILER_IMPORT_ONNX_PATTERNS_H

#include "compiler/import/onnx/OnnxFile.h"

#include <vector>

namespace ampc::onnx {

// The graph's nodes with each exact-GELU subgraph the exporters emit for
// torch.nn.GELU() below opset 20,
//   Div(x, sqrt(2)) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)
// (also Mul(x, 1/sqrt(2)), and 0.5 applied to x first), replaced by one Gelu
// node named after the Erf node: one gelu is what AMP and the kernels want
// (one fused op with its own VJP instead of five).
std::vector<Node> fuseErfGelu(const Graph &graph);

} // namespace ampc::onnx

#endif
