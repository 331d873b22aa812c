// RUN: not ampc check %s 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// RUN: not ampc compile %s --emit=cpp -o /dev/null 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// Found by test/fuzz/fuzz_models.py (seed 15, iteration 98: gpt_tiny with its
// MLP width 256 replaced by 0 everywhere). The shapes agree, so the model
// verified, and LinearOp::buildVJP divided the input's element count by the
// weight's K = 0: SIGFPE in ampc check's step-memory summary. Dimensions of
// size 0 are now rejected with the other size checks in ModelOp::verify.
graph.model @zero {
  %x = graph.input "x" : tensor<4x8xf32>
  %y = graph.input "y" : tensor<4xi64>
  %w1 = graph.param "fc1.weight" init(#graph.zeros) : tensor<0x8xf32>
  %w2 = graph.param "fc2.weight" init(#graph.zeros) : tensor<3x0xf32>
  %h = graph.linear %x, %w1 : tensor<4x8xf32>, tensor<0x8xf32> -> tensor<4x0xf32>
  %o = graph.linear %h, %w2 : tensor<4x0xf32>, tensor<3x0xf32> -> tensor<4x3xf32>
  %loss = graph.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
// CHECK: zero-dim-linear-vjp.mlir:11:9: error: 'graph.param' op result type 'tensor<0x8xf32>' has a dimension of size 0; empty tensors are not supported
