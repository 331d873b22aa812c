// The backward IR of nll_loss, gather and cumsum, and argmax as a
// non-differentiable op (an integer result gets no cotangent, so autodiff
// passes over it).
// RUN: ampc-opt --graph-autodiff --split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @nll_grad(
// CHECK-SAME: %[[Y:[^:]*]]: tensor<4xi64> {graph.input = "y"}
// CHECK-SAME: %[[Z:[^:]*]]: tensor<4x5xf32> {graph.param = "z"}
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32> {graph.loss_scale})
// CHECK: %[[L:.*]] = graph.nll_loss %[[Z]], %[[Y]] {ignore_index = 0 : i64} : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
// CHECK: %[[D:.*]] = graph.nll_loss_backward %[[Y]], %[[S]] {ignore_index = 0 : i64} : tensor<4xi64>, tensor<f32> -> tensor<4x5xf32>
// CHECK: return %[[L]], %[[D]]
graph.model @nll {
  %y = graph.input "y" : tensor<4xi64>
  %z = graph.param "z" init(#graph.zeros) : tensor<4x5xf32>
  %l = graph.nll_loss %z, %y {ignore_index = 0} : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @pick_grad(
// CHECK-SAME: %[[Z:[^:]*]]: tensor<4x6xf32> {graph.param = "z"}
// CHECK: %[[I:.*]] = graph.argmax %[[Z]] {axis = 1 : i64, keepdim = true} : tensor<4x6xf32> -> tensor<4x1xi64>
// CHECK: %[[M:.*]] = graph.gather %[[Z]], %[[I]] {axis = 1 : i64}
// CHECK: %[[C:.*]] = graph.cumsum %[[M]] {axis = 0 : i64} : tensor<4x1xf32>
// CHECK: %[[RC:.*]] = graph.cumsum %{{.*}} {axis = 0 : i64, reverse} : tensor<4x1xf32>
// CHECK: %[[D:.*]] = graph.gather_backward %[[I]], %[[RC]] {axis = 1 : i64} : tensor<4x1xi64>, tensor<4x1xf32> -> tensor<4x6xf32>
// CHECK: return %{{.*}}, %[[D]]
graph.model @pick {
  %z = graph.param "z" init(#graph.zeros) : tensor<4x6xf32>
  %i = graph.argmax %z {axis = 1, keepdim = true} : tensor<4x6xf32> -> tensor<4x1xi64>
  %m = graph.gather %z, %i {axis = 1} : tensor<4x6xf32>, tensor<4x1xi64> -> tensor<4x1xf32>
  %c = graph.cumsum %m {axis = 0} : tensor<4x1xf32>
  %l = graph.reduce_sum %c : tensor<4x1xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
