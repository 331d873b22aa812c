// kernel-fuse-residual-norm: a residual add loop feeding layer_norm becomes
// kernel.add_layer_norm; layer_norm_backward whose dx only feeds an add
// (+ cast) loop becomes kernel.layer_norm_backward_add. Everything else is
// left alone.
// RUN: ampc-opt %s --split-input-file --kernel-fuse-elementwise --kernel-fuse-residual-norm | FileCheck %s

// A pre-norm block's forward: the bf16 branch output added to the f32
// residual (the add's operand order kept), the sum returned too.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[R:[a-z0-9]+]]: tensor<4x32xf32>, %[[D:[a-z0-9]+]]: tensor<4x32xbf16>, %[[W:[a-z0-9]+]]: tensor<32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>
// CHECK-NOT: kernel.fused_elementwise
// CHECK: %[[S:.*]], %[[Y:.*]] = kernel.add_layer_norm %[[R]], %[[D]], %[[W]], %[[B]] : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
// CHECK-NOT: graph.layer_norm
// CHECK: return %[[S]], %[[Y]]
func.func @forward(%r: tensor<4x32xf32>, %d: tensor<4x32xbf16>, %w: tensor<32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xbf16>) {
  %c = graph.cast %d : tensor<4x32xbf16> -> tensor<4x32xf32>
  %s = graph.add %r, %c : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %y = graph.layer_norm %s, %w, %b : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xbf16>
  return %s, %y : tensor<4x32xf32>, tensor<4x32xbf16>
}

// -----

// Two f32 addends, no affine operands: the sum feeds the next add loop.
// CHECK-LABEL: func.func @forward_f32(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x3x8xf32>, %[[B:[a-z0-9]+]]: tensor<2x3x8xf32>
// CHECK: %[[S:.*]], %[[Y:.*]] = kernel.add_layer_norm %[[B]], %[[A]] {eps = 1.000000e-03 : f64} : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>, tensor<2x3x8xf32>
// CHECK: %[[S2:.*]], %[[Y2:.*]] = kernel.add_layer_norm %[[Y]], %[[S]] :
// CHECK: return %[[Y2]]
func.func @forward_f32(%a: tensor<2x3x8xf32>, %b: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %s = graph.add %b, %a : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %y = graph.layer_norm %s {eps = 1.0e-03} : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %s2 = graph.add %y, %s : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %y2 = graph.layer_norm %s2 : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  return %y2 : tensor<2x3x8xf32>
}

// -----

// The backward: dx added to the incoming residual gradient, the sum and its
// bf16 cast both yielded.
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x32xf32>, %[[W:[a-z0-9]+]]: tensor<32xf32>, %[[G:[a-z0-9]+]]: tensor<4x32xbf16>, %[[ACC:[a-z0-9]+]]: tensor<4x32xf32>
// CHECK-NOT: graph.layer_norm_backward
// CHECK: %[[DX:.*]], %[[DW:.*]], %[[DB:.*]], %[[H:.*]] = kernel.layer_norm_backward_add %[[X]], %[[W]], %[[G]], %[[ACC]] : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x32xbf16>
// CHECK-NOT: kernel.fused_elementwise
// CHECK: return %[[DX]], %[[H]], %[[DW]], %[[DB]]
func.func @backward(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %g: tensor<4x32xbf16>, %acc: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32>) {
  %dx, %dw, %db = graph.layer_norm_backward %x, %w, %g : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  %s = graph.add %acc, %dx : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %h = graph.cast %s : tensor<4x32xf32> -> tensor<4x32xbf16>
  return %s, %h, %dw, %db : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32>
}

// -----

// FP32 (no cast): dx first in the add, no half copy.
// CHECK-LABEL: func.func @backward_f32(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x32xf32>, %[[W:[a-z0-9]+]]: tensor<32xf32>, %[[G:[a-z0-9]+]]: tensor<4x32xf32>, %[[ACC:[a-z0-9]+]]: tensor<4x32xf32>
// CHECK: %[[DX:.*]], %[[DW:.*]], %{{.*}} = kernel.layer_norm_backward_add %[[X]], %[[W]], %[[G]], %[[ACC]] {eps = 2.000000e-05 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
// CHECK: return %[[DX]], %[[DW]]
func.func @backward_f32(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %g: tensor<4x32xf32>, %acc: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<32xf32>) {
  %dx, %dw, %db = graph.layer_norm_backward %x, %w, %g {eps = 2.0e-05} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  %s = graph.add %dx, %acc : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  return %s, %dw : tensor<4x32xf32>, tensor<32xf32>
}

// -----

// Negative: dx has another user (it is returned), so the backward stays.
// CHECK-LABEL: func.func @dx_other_user(
// CHECK: graph.layer_norm_backward
// CHECK: kernel.fused_elementwise
// CHECK-NOT: kernel.layer_norm_backward_add
func.func @dx_other_user(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %g: tensor<4x32xf32>, %acc: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %dx, %dw, %db = graph.layer_norm_backward %x, %w, %g : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  %s = graph.add %acc, %dx : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  return %s, %dx : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Negative: an add of something else (a broadcast bias, not a residual of
// the rows' shape), and a sub.
// CHECK-LABEL: func.func @not_residual(
// CHECK: kernel.fused_elementwise
// CHECK: graph.layer_norm
// CHECK: kernel.fused_elementwise
// CHECK: graph.layer_norm
// CHECK-NOT: kernel.add_layer_norm
func.func @not_residual(%x: tensor<4x32xf32>, %b: tensor<32xf32>, %r: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %s = graph.add %x, %b : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %y = graph.layer_norm %s : tensor<4x32xf32> -> tensor<4x32xf32>
  %d = graph.sub %x, %r : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %y2 = graph.layer_norm %d : tensor<4x32xf32> -> tensor<4x32xf32>
  return %y, %y2 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Negative: a body with more ops (the add's sum goes through a relu; the
// backward's loop also scales the sum).
// CHECK-LABEL: func.func @more_ops(
// CHECK: graph.relu
// CHECK: graph.layer_norm
// CHECK: graph.layer_norm_backward
// CHECK: graph.mul
// CHECK-NOT: kernel.add_layer_norm
// CHECK-NOT: kernel.layer_norm_backward_add
func.func @more_ops(%x: tensor<4x32xf32>, %r: tensor<4x32xf32>, %w: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %s = graph.add %x, %r : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %a = graph.relu %s : tensor<4x32xf32>
  %y = graph.layer_norm %a : tensor<4x32xf32> -> tensor<4x32xf32>
  %dx, %dw, %db = graph.layer_norm_backward %x, %w, %r : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  %t = graph.add %r, %dx : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %m = graph.mul %t, %t : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  return %y, %t, %m : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Negative: a half sum (no FP32 residual stream) is left to the loop.
// CHECK-LABEL: func.func @half_sum(
// CHECK: kernel.fused_elementwise
// CHECK: graph.layer_norm
// CHECK-NOT: kernel.add_layer_norm
func.func @half_sum(%a: tensor<4x32xbf16>, %b: tensor<4x32xbf16>) -> tensor<4x32xbf16> {
  %s = graph.add %a, %b : tensor<4x32xbf16>, tensor<4x32xbf16> -> tensor<4x32xbf16>
  %y = graph.layer_norm %s : tensor<4x32xbf16> -> tensor<4x32xbf16>
  return %y : tensor<4x32xbf16>
}

// -----

// RMS norm (llama's pre-norm blocks): the same two rewrites; eps is kept
// when given, absent when not.
// CHECK-LABEL: func.func @rms(
// CHECK-SAME: %[[R:[a-z0-9]+]]: tensor<4x32xf32>, %[[D:[a-z0-9]+]]: tensor<4x32xbf16>, %[[W:[a-z0-9]+]]: tensor<32xf32>, %[[G:[a-z0-9]+]]: tensor<4x32xbf16>, %[[ACC:[a-z0-9]+]]: tensor<4x32xf32>
// CHECK: %[[S:.*]], %[[Y:.*]] = kernel.add_rms_norm %[[R]], %[[D]], %[[W]] {eps = 1.000000e-05 : f64} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
// CHECK: %[[DX:.*]], %[[DW:.*]], %[[H:.*]] = kernel.rms_norm_backward_add %[[S]], %[[W]], %[[G]], %[[ACC]] : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>
// CHECK-NOT: graph.rms_norm
// CHECK-NOT: kernel.fused_elementwise
// CHECK: return %[[Y]], %[[DX]], %[[DW]], %[[H]]
func.func @rms(%r: tensor<4x32xf32>, %d: tensor<4x32xbf16>, %w: tensor<32xf32>, %g: tensor<4x32xbf16>, %acc: tensor<4x32xf32>) -> (tensor<4x32xbf16>, tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>) {
  %c = graph.cast %d : tensor<4x32xbf16> -> tensor<4x32xf32>
  %s = graph.add %r, %c : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %y = graph.rms_norm %s, %w {eps = 1.0e-05} : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xbf16>
  %dx, %dw = graph.rms_norm_backward %s, %w, %g : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16> -> tensor<4x32xf32>, tensor<32xf32>
  %t = graph.add %dx, %acc : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %h = graph.cast %t : tensor<4x32xf32> -> tensor<4x32xbf16>
  return %y, %t, %dw, %h : tensor<4x32xbf16>, tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>
}
