// RUN: not ampc check %s 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// RUN: not ampc compile %s -o %t 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// Found by test/fuzz/fuzz_models.py under UBSan (scripts/sanitize.sh, seed 15): a
// dynamic dimension ('?') passed verification and its INT64_MIN overflowed
// every size computed from it (ModelSummary, KernelPlanMemory).
// CHECK: dynamic-dim-input.mlir:8:{{[0-9]+}}: error: {{.*}}has a dynamic dimension ('?'); shapes are static
graph.model @linreg {
  %x = graph.input "x" : tensor<?x2xf32>
  %t = graph.input "t" : tensor<?x1xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x1xf32>
  %y = graph.matmul %x, %w : tensor<?x2xf32>, tensor<2x1xf32> -> tensor<?x1xf32>
  %loss = graph.mse_loss %y, %t : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
