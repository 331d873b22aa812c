// matmul/batch_matmul's lhs_transposed / rhs_transposed flags: parsed,
// printed, and the result shape follows them.
// RUN: ampc-opt %s | ampc-opt | FileCheck %s

// CHECK-LABEL: graph.model @flags
// CHECK: graph.matmul %{{.*}}, %{{.*}} {lhs_transposed} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK: graph.matmul %{{.*}}, %{{.*}} {rhs_transposed} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK: graph.batch_matmul %{{.*}}, %{{.*}} {lhs_transposed, rhs_transposed} : tensor<2x8x4xbf16>, tensor<2x5x8xbf16> -> tensor<2x4x5xbf16>
graph.model @flags {
  %a = graph.input "a" : tensor<8x4xf32>
  %b = graph.input "b" : tensor<8x16xf32>
  %c = graph.input "c" : tensor<4x8xf32>
  %d = graph.input "d" : tensor<16x8xf32>
  %p = graph.input "p" : tensor<2x8x4xbf16>
  %q = graph.input "q" : tensor<2x5x8xbf16>
  %m1 = graph.matmul %a, %b {lhs_transposed} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %m2 = graph.matmul %c, %d {rhs_transposed} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %m3 = graph.batch_matmul %p, %q {lhs_transposed, rhs_transposed} : tensor<2x8x4xbf16>, tensor<2x5x8xbf16> -> tensor<2x4x5xbf16>
  %s = graph.add %m1, %m2 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %l = graph.reduce_sum %s : tensor<4x16xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
