// train-drop-eval-outputs: @m_grad keeps the loss and the gradients; the
// other outputs go, and with them what only they read: here the softmax of
// `probs` and, under autocast, the FP32 copy of the logits (once
// graph-absorb-casts lets the loss read the half logits). The model itself
// still returns everything: evaluation runs it.
// RUN: ampc-opt %s --graph-autocast=mode=bf16 --graph-autodiff --train-drop-eval-outputs --graph-absorb-casts | FileCheck %s
// Without the pass, the cast and the softmax stay for the outputs:
// RUN: ampc-opt %s --graph-autocast=mode=bf16 --graph-autodiff --graph-absorb-casts | FileCheck %s --check-prefix=KEEP

// CHECK-LABEL: graph.model @clf
// CHECK:       graph.softmax
// CHECK:       graph.output loss = %{{.*}} : tensor<f32>, logits = %{{.*}} : tensor<4x3xf32>, probs = %{{.*}} : tensor<4x3xf32>
// CHECK-LABEL: func.func @clf_grad(
// CHECK-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<3x8xf32> {graph.grad = "fc.weight"}, tensor<3xf32> {graph.grad = "fc.bias"})
// CHECK:       %[[Y:.*]] = graph.linear %{{.*}}, %{{.*}}, %{{.*}} {{.*}}-> tensor<4x3xbf16>
// CHECK-NOT:   graph.cast %[[Y]]
// CHECK-NOT:   graph.softmax
// CHECK:       %[[L:.*]] = graph.cross_entropy %[[Y]]
// CHECK-NOT:   graph.softmax
// CHECK:       return %[[L]], %{{.*}}, %{{.*}} : tensor<f32>, tensor<3x8xf32>, tensor<3xf32>

// KEEP-LABEL: func.func @clf_grad(
// KEEP-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<4x3xf32> {graph.output = "logits"}, tensor<4x3xf32> {graph.output = "probs"},
// KEEP:       %[[Y:.*]] = graph.linear
// KEEP:       graph.cast %[[Y]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// KEEP:       graph.softmax
graph.model @clf {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4xi64>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<3x8xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<3xf32>
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %p = graph.softmax %y {axis = 1} : tensor<4x3xf32>
  %l = graph.cross_entropy %y, %t : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, logits = %y : tensor<4x3xf32>, probs = %p : tensor<4x3xf32>
}
