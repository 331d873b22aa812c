// squeeze, unsqueeze, expand and broadcasting matmul/batch_matmul parse,
// verify, print and parse again (custom and generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @sugar
graph.model @sugar {
  %x = graph.input "x" : tensor<4x1x8xf32>
  // CHECK: graph.squeeze %{{.*}} {axes = array<i64: 1>} : tensor<4x1x8xf32> -> tensor<4x8xf32>
  %s = graph.squeeze %x {axes = array<i64: 1>} : tensor<4x1x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.squeeze %{{.*}} : tensor<4x1x8xf32> -> tensor<4x8xf32>
  %s2 = graph.squeeze %x : tensor<4x1x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.squeeze %{{.*}} {axes = array<i64: 0>} : tensor<4x1x8xf32> -> tensor<4x1x8xf32>
  %s3 = graph.squeeze %x {axes = array<i64: 0>} : tensor<4x1x8xf32> -> tensor<4x1x8xf32>
  // CHECK: graph.unsqueeze %{{.*}} {axes = array<i64: 0, -1>} : tensor<4x8xf32> -> tensor<1x4x8x1xf32>
  %u = graph.unsqueeze %s {axes = array<i64: 0, -1>} : tensor<4x8xf32> -> tensor<1x4x8x1xf32>
  // CHECK: graph.expand %{{.*}} : tensor<1x4x8x1xf32> -> tensor<3x4x8x5xf32>
  %e = graph.expand %u : tensor<1x4x8x1xf32> -> tensor<3x4x8x5xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<5x6xf32>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<3x4x8x5xf32>, tensor<5x6xf32> -> tensor<3x4x8x6xf32>
  %m = graph.matmul %e, %w : tensor<3x4x8x5xf32>, tensor<5x6xf32> -> tensor<3x4x8x6xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4x6x2xf32>
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} : tensor<3x4x8x6xf32>, tensor<4x6x2xf32> -> tensor<3x4x8x2xf32>
  %bm = graph.batch_matmul %m, %b : tensor<3x4x8x6xf32>, tensor<4x6x2xf32> -> tensor<3x4x8x2xf32>
  %l = graph.reduce_sum %bm : tensor<3x4x8x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, a = %s2 : tensor<4x8xf32>, c = %s3 : tensor<4x1x8xf32>
}
