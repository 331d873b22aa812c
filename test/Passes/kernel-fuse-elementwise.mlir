// RUN: ampc-opt %s --split-input-file --kernel-fuse-elementwise | FileCheck %s

// A bias add, relu and cast chain (same shape, a broadcast bias) becomes
// one loop; the matmul stays a library call.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf16>, %[[W:[a-z0-9]+]]: tensor<8x8xf16>, %[[B:[a-z0-9]+]]: tensor<8xf16>
// CHECK: %[[MM:.*]] = graph.matmul %[[X]], %[[W]]
// CHECK: %[[F:.*]] = kernel.fused_elementwise ins(%[[MM]], %[[B]] : tensor<4x8xf16>, tensor<8xf16>) {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x8xf16>, %[[A1:.*]]: tensor<8xf16>):
// CHECK-NEXT: %[[S:.*]] = graph.add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[S]]
// CHECK-NEXT: %[[C:.*]] = graph.cast %[[R]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: kernel.yield %[[C]] : tensor<4x8xf32>
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[F]]
func.func @chain(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf32> {
  %m = graph.matmul %x, %w : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
  %s = graph.add %m, %b : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %r = graph.relu %s : tensor<4x8xf16>
  %c = graph.cast %r : tensor<4x8xf16> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// A value used outside the loop after it is yielded as a second result.
// CHECK-LABEL: func.func @two_results(
// CHECK: %[[F:.*]]:2 = kernel.fused_elementwise ins(%{{.*}} : tensor<4xf32>) {
// CHECK: graph.exp
// CHECK: graph.neg
// CHECK: kernel.yield
// CHECK: } -> tensor<4xf32>, tensor<4xf32>
// CHECK: graph.reduce_sum %[[F]]#0
// CHECK: return %[[F]]#1
func.func @two_results(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4xf32>
  %n = graph.neg %e : tensor<4xf32>
  %s = graph.reduce_sum %e : tensor<4xf32> -> tensor<f32>
  return %n : tensor<4xf32>
}

// -----

// %e is used by the reduction before %n: the loop holding %e cannot move
// below it, so %n starts a loop of its own.
// CHECK-LABEL: func.func @early_use(
// CHECK: %[[E:.*]] = kernel.fused_elementwise
// CHECK: graph.exp
// CHECK: %[[S:.*]] = graph.reduce_sum %[[E]]
// CHECK: kernel.fused_elementwise ins(%[[E]], %[[S]] : tensor<4xf32>, tensor<f32>)
// CHECK: graph.sub
func.func @early_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4xf32>
  %s = graph.reduce_sum %e : tensor<4xf32> -> tensor<f32>
  %n = graph.sub %e, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// Different shapes are different loops; the graph.model body is fused too.
// CHECK-LABEL: graph.model @m
// CHECK: %[[A:.*]] = kernel.fused_elementwise ins(%{{.*}} : tensor<4xf32>)
// CHECK: graph.relu
// CHECK: } -> tensor<4xf32>
// CHECK: kernel.fused_elementwise ins(%{{.*}}, %[[A]] : tensor<3x4xf32>, tensor<4xf32>)
// CHECK: graph.mul
// CHECK: } -> tensor<3x4xf32>
graph.model @m {
  %x = graph.input "x" : tensor<3x4xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<4xf32>
  %r = graph.relu %w : tensor<4xf32>
  %p = graph.mul %x, %r : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %p : tensor<3x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
