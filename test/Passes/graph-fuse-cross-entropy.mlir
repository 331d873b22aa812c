// graph-fuse-cross-entropy: a cross_entropy and its backward of the same
// logits and labels become one cross_entropy_with_grad at the forward's
// position, where the backward's g is defined before the forward.
// RUN: ampc-opt %s --split-input-file --graph-fuse-cross-entropy | FileCheck %s

// The training step's shape: g is the loss-scale argument. The fused op
// keeps the forward's attributes (precision notes included) and sits where
// the forward was; the loss's users and dlogits' users read its results.
// CHECK-LABEL: func.func @step(
// CHECK: %[[Z:.*]] = graph.linear
// CHECK-NEXT: %[[L:.*]], %[[DZ:.*]] = graph.cross_entropy_with_grad %[[Z]], %arg1, %arg3 {amp.precision = "fp32", amp.rule = "fp32-list (loss)"} : tensor<8x16xbf16>, tensor<8xi64>, tensor<f32> -> tensor<f32>, tensor<8x16xbf16>
// CHECK-NEXT: graph.matmul %[[DZ]], %arg2
// CHECK: return %[[L]],
// CHECK-NOT: graph.cross_entropy %
// CHECK-NOT: graph.cross_entropy_backward
func.func @step(%x: tensor<8x4xbf16>, %y: tensor<8xi64>, %w: tensor<16x4xbf16>, %scale: tensor<f32> {graph.loss_scale}) -> (tensor<f32>, tensor<8x4xbf16>) {
  %z = graph.linear %x, %w : tensor<8x4xbf16>, tensor<16x4xbf16> -> tensor<8x16xbf16>
  %l = graph.cross_entropy %z, %y {amp.precision = "fp32", amp.rule = "fp32-list (loss)"} : tensor<8x16xbf16>, tensor<8xi64> -> tensor<f32>
  %dz = graph.cross_entropy_backward %z, %y, %scale : tensor<8x16xbf16>, tensor<8xi64>, tensor<f32> -> tensor<8x16xbf16>
  %dx = graph.matmul %dz, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
  return %l, %dx : tensor<f32>, tensor<8x4xbf16>
}

// -----

// ignore_index and label_smoothing carry over (they must match); the
// gradient may have another float type than the logits.
// CHECK-LABEL: func.func @attributes(
// CHECK: graph.cross_entropy_with_grad %arg0, %arg1, %arg2 {ignore_index = 3 : i64, label_smoothing = 1.000000e-01 : f64} : tensor<4x2x10xf32>, tensor<4x2xi32>, tensor<f32> -> tensor<f32>, tensor<4x2x10xf16>
func.func @attributes(%z: tensor<4x2x10xf32>, %y: tensor<4x2xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x2x10xf16>) {
  %l = graph.cross_entropy %z, %y {ignore_index = 3 : i64, label_smoothing = 0.1} : tensor<4x2x10xf32>, tensor<4x2xi32> -> tensor<f32>
  %dz = graph.cross_entropy_backward %z, %y, %g {ignore_index = 3 : i64, label_smoothing = 0.1} : tensor<4x2x10xf32>, tensor<4x2xi32>, tensor<f32> -> tensor<4x2x10xf16>
  return %l, %dz : tensor<f32>, tensor<4x2x10xf16>
}

// -----

// g computed after the forward (a loss scaled on the way): left alone.
// CHECK-LABEL: func.func @late_g(
// CHECK: graph.cross_entropy %
// CHECK: graph.cross_entropy_backward
// CHECK-NOT: cross_entropy_with_grad
func.func @late_g(%z: tensor<8x16xf32>, %y: tensor<8xi64>, %s: tensor<f32>) -> (tensor<f32>, tensor<8x16xf32>) {
  %l = graph.cross_entropy %z, %y : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  %g = graph.mul %s, %l : tensor<f32>, tensor<f32> -> tensor<f32>
  %dz = graph.cross_entropy_backward %z, %y, %g : tensor<8x16xf32>, tensor<8xi64>, tensor<f32> -> tensor<8x16xf32>
  return %l, %dz : tensor<f32>, tensor<8x16xf32>
}

// -----

// Other labels, another label_smoothing, another ignore_index, or the
// backward before the forward: not the pair.
// CHECK-LABEL: func.func @mismatch(
// CHECK-COUNT-4: graph.cross_entropy_backward
// CHECK-NOT: cross_entropy_with_grad
func.func @mismatch(%z: tensor<8x16xf32>, %y: tensor<8xi64>, %y2: tensor<8xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %d0 = graph.cross_entropy_backward %z, %y, %g : tensor<8x16xf32>, tensor<8xi64>, tensor<f32> -> tensor<8x16xf32>
  %l = graph.cross_entropy %z, %y {label_smoothing = 0.2} : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  %l2 = graph.cross_entropy %z, %y2 {ignore_index = 0 : i64} : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  %d1 = graph.cross_entropy_backward %z, %y2, %g : tensor<8x16xf32>, tensor<8xi64>, tensor<f32> -> tensor<8x16xf32>
  %d2 = graph.cross_entropy_backward %z, %y, %g {label_smoothing = 0.1} : tensor<8x16xf32>, tensor<8xi64>, tensor<f32> -> tensor<8x16xf32>
  %d3 = graph.cross_entropy_backward %z, %y, %g : tensor<8x16xf32>, tensor<8xi64>, tensor<f32> -> tensor<8x16xf32>
  return %l, %l2, %d0, %d1, %d2, %d3 : tensor<f32>, tensor<f32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A forward alone (evaluation) is left as it is.
// CHECK-LABEL: func.func @eval(
// CHECK: graph.cross_entropy %
// CHECK-NOT: cross_entropy_with_grad
func.func @eval(%z: tensor<8x16xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %l = graph.cross_entropy %z, %y : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  return %l : tensor<f32>
}
