// RUN: ampc-opt --graph-absorb-casts --split-input-file %s | FileCheck %s

// The cross-entropy of GPT-2's head under bf16 autocast: the logits' f32
// copy goes (forward and backward read bf16), dlogits is written as bf16.
// CHECK-LABEL: func.func @ce(
// CHECK-SAME: %[[Z:.*]]: tensor<4x10xbf16>, %[[Y:.*]]: tensor<4xi64>, %[[G:.*]]: tensor<f32>
// CHECK-NOT: graph.cast
// CHECK: %[[L:.*]] = graph.cross_entropy %[[Z]], %[[Y]] {amp.precision = "fp32"} : tensor<4x10xbf16>, tensor<4xi64> -> tensor<f32>
// CHECK: %[[D:.*]] = graph.cross_entropy_backward %[[Z]], %[[Y]], %[[G]] : tensor<4x10xbf16>, tensor<4xi64>, tensor<f32> -> tensor<4x10xbf16>
// CHECK-NOT: graph.cast
// CHECK: return %[[L]], %[[D]]
func.func @ce(%z: tensor<4x10xbf16>, %y: tensor<4xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x10xbf16>) {
  %z32 = graph.cast %z : tensor<4x10xbf16> -> tensor<4x10xf32>
  %l = graph.cross_entropy %z32, %y {amp.precision = "fp32"} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %d = graph.cross_entropy_backward %z32, %y, %g : tensor<4x10xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x10xf32>
  %d16 = graph.cast %d : tensor<4x10xf32> -> tensor<4x10xbf16>
  return %l, %d16 : tensor<f32>, tensor<4x10xbf16>
}

// -----

// layer_norm on the f32 residual feeding a half linear: y is written as f16;
// the backward reads the f16 cotangent and keeps x, weight and the f32
// parameter gradients; dx feeds an f32 add, so it stays f32.
// CHECK-LABEL: func.func @ln(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<4x8xf16>
// CHECK: %[[Y:.*]] = graph.layer_norm %[[X]], %[[W]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf16>
// CHECK: %[[DX:.*]], %{{.*}}, %{{.*}} = graph.layer_norm_backward %[[X]], %[[W]], %[[G]] : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf16> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK: graph.add %[[DX]], %[[X]]
// CHECK-NOT: graph.cast
// CHECK: return %[[Y]]
func.func @ln(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %g: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y = graph.layer_norm %x, %w, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y16 = graph.cast %y : tensor<4x8xf32> -> tensor<4x8xf16>
  %g32 = graph.cast %g : tensor<4x8xf16> -> tensor<4x8xf32>
  %dx, %dw, %db = graph.layer_norm_backward %x, %w, %g32 : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %s = graph.add %dx, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %y16, %s, %dw, %db : tensor<4x8xf16>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// rms_norm without eps ran in f32: its eps (2^-23) is spelled out before the
// types change, so it does not become bf16's 2^-7. Its backward's dx is
// written as bf16; the weight's widening cast stays (dweight has weight's
// type), as does an eps the op already had.
// CHECK-LABEL: func.func @rms(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<8xbf16>, %[[G:.*]]: tensor<4x8xbf16>
// CHECK: %[[W32:.*]] = graph.cast %[[W]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK: %[[Y:.*]] = graph.rms_norm %[[X]], %[[W]] {eps = 1.1920928955078125E-7 : f64} : tensor<4x8xbf16>, tensor<8xbf16> -> tensor<4x8xbf16>
// CHECK: %[[DX:.*]], %[[DW:.*]] = graph.rms_norm_backward %[[X]], %[[W32]], %[[G]] {eps = 9.9999999999999995E-7 : f64} : tensor<4x8xbf16>, tensor<8xf32>, tensor<4x8xbf16> -> tensor<4x8xbf16>, tensor<8xf32>
// CHECK-NOT: graph.cast
// CHECK: return %[[Y]], %[[DX]], %[[DW]]
func.func @rms(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>, %g: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<8xf32>) {
  %x32 = graph.cast %x : tensor<4x8xbf16> -> tensor<4x8xf32>
  %w32 = graph.cast %w : tensor<8xbf16> -> tensor<8xf32>
  %y = graph.rms_norm %x32, %w32 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y16 = graph.cast %y : tensor<4x8xf32> -> tensor<4x8xbf16>
  %g32 = graph.cast %g : tensor<4x8xbf16> -> tensor<4x8xf32>
  %dx, %dw = graph.rms_norm_backward %x32, %w32, %g32 {eps = 1.0e-06} : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  %dx16 = graph.cast %dx : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %y16, %dx16, %dw : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<8xf32>
}

// -----

// Left alone: a result with another FP32 use (y also feeds an f32 add) keeps
// its narrowing cast; a widening cast with another FP32 user stays for that
// user (layer_norm itself reads f16); a cast between the half types is not
// exact; results cast to two different half types keep both casts; ops not
// computing in FP32 (softmax) and soft-label cross_entropy keep theirs.
// CHECK-LABEL: func.func @kept(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf16>
// CHECK: %[[X32:.*]] = graph.cast %[[X]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK: %[[Y:.*]] = graph.layer_norm %[[X]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK: graph.cast %[[Y]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK: graph.add %[[Y]], %[[X32]]
// CHECK: %[[XB:.*]] = graph.cast %[[X]] : tensor<4x8xf16> -> tensor<4x8xbf16>
// CHECK: %[[Z:.*]] = graph.layer_norm %[[XB]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK: graph.cast %[[Z]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK: graph.cast %[[Z]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: graph.softmax %[[X32]]
// CHECK: graph.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK: graph.cross_entropy %[[X32]], %[[X32]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
func.func @kept(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<f32>) {
  %x32 = graph.cast %x : tensor<4x8xf16> -> tensor<4x8xf32>
  %y = graph.layer_norm %x32 : tensor<4x8xf32> -> tensor<4x8xf32>
  %y16 = graph.cast %y : tensor<4x8xf32> -> tensor<4x8xf16>
  %s = graph.add %y, %x32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %xb = graph.cast %x : tensor<4x8xf16> -> tensor<4x8xbf16>
  %z = graph.layer_norm %xb : tensor<4x8xbf16> -> tensor<4x8xf32>
  %z16 = graph.cast %z : tensor<4x8xf32> -> tensor<4x8xf16>
  %zb = graph.cast %z : tensor<4x8xf32> -> tensor<4x8xbf16>
  %p = graph.softmax %x32 {axis = -1} : tensor<4x8xf32>
  %p16 = graph.cast %p : tensor<4x8xf32> -> tensor<4x8xf16>
  %l = graph.cross_entropy %x32, %x32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
  return %y16, %s, %z16, %zb, %p16, %l : tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<f32>
}
