// The backward IR of conv_transpose2d: the input cotangent is conv2d of the
// output cotangent with the same weight and attributes (output_padding
// dropped: conv2d's floor division skips those rows), the weight's is
// conv2d_backward_weight with the cotangent as conv2d's input, the bias's a
// sum over N, H and W.
// RUN: ampc-opt --graph-autodiff %s | FileCheck %s

// CHECK-LABEL: func.func @m_grad(
// CHECK-SAME: %[[T:[^:]*]]: tensor<2x6x6x5xf32> {graph.input = "t"}
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x3x3xf32> {graph.param = "x"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x3x3x2xf32> {graph.param = "w"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<6xf32> {graph.param = "b"}
// CHECK: %[[Y:.*]] = graph.conv_transpose2d %[[X]], %[[W]], %[[B]]
// CHECK: %[[G:.*]] = graph.mul %{{.*}} : tensor<2x6x6x5xf32>, tensor<f32> -> tensor<2x6x6x5xf32>
// CHECK-NEXT: %[[DX:.*]] = graph.conv2d %[[G]], %[[W]] {dilation = array<i64: 1, 2>, groups = 2 : i64, padding = array<i64: 1, 0>, stride = array<i64: 2, 1>} : tensor<2x6x6x5xf32>, tensor<4x3x3x2xf32> -> tensor<2x4x3x3xf32>
// CHECK-NEXT: %[[DW:.*]] = graph.conv2d_backward_weight %[[G]], %[[X]] {dilation = array<i64: 1, 2>, groups = 2 : i64, padding = array<i64: 1, 0>, stride = array<i64: 2, 1>} : tensor<2x6x6x5xf32>, tensor<2x4x3x3xf32> -> tensor<4x3x3x2xf32>
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_sum %[[G]] {axes = array<i64: 0, 2, 3>} : tensor<2x6x6x5xf32> -> tensor<6xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DW]], %[[DB]]
graph.model @m {
  %t = graph.input "t" : tensor<2x6x6x5xf32>
  %x = graph.param "x" init(#graph.normal<std = 1.0>) : tensor<2x4x3x3xf32>
  %w = graph.param "w" init(#graph.normal<std = 0.1>) : tensor<4x3x3x2xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<6xf32>
  %y = graph.conv_transpose2d %x, %w, %b {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, output_padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2} : tensor<2x4x3x3xf32>, tensor<4x3x3x2xf32>, tensor<6xf32> -> tensor<2x6x6x5xf32>
  %l = graph.mse_loss %y, %t : tensor<2x6x6x5xf32>, tensor<2x6x6x5xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
