// Every kernel op parses, verifies, prints and parses again (custom and
// generic forms), with the memory-plan attributes of KernelOps.h.
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// One loop, one result; the bias is read with broadcasting.
// CHECK-LABEL: func.func @bias_relu(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<4x8xf16>, %[[B:[a-z0-9]+]]: tensor<8xf16>
// CHECK: %[[R:.*]] = kernel.fused_elementwise ins(%[[H]], %[[B]] : tensor<4x8xf16>, tensor<8xf16>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf16>, %[[Y:.*]]: tensor<8xf16>):
// CHECK-NEXT: %[[S:.*]] = graph.add %[[X]], %[[Y]] : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
// CHECK-NEXT: %[[A:.*]] = graph.relu %[[S]] : tensor<4x8xf16>
// CHECK-NEXT: kernel.yield %[[A]] : tensor<4x8xf16>
// CHECK-NEXT: } -> tensor<4x8xf16>
// CHECK-NEXT: return %[[R]]
func.func @bias_relu(%h: tensor<4x8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  %r = kernel.fused_elementwise ins(%h, %b : tensor<4x8xf16>, tensor<8xf16>) {
  ^bb0(%x: tensor<4x8xf16>, %y: tensor<8xf16>):
    %s = graph.add %x, %y : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
    %a = graph.relu %s : tensor<4x8xf16>
    kernel.yield %a : tensor<4x8xf16>
  } -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

// Two results of one shape and different element types; a rank-0 input and
// a size-1 dimension broadcast.
// CHECK-LABEL: func.func @two_results(
// CHECK: %[[F:.*]]:2 = kernel.fused_elementwise ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<f32>, tensor<3x1xf32>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<f32>, %[[C:.*]]: tensor<3x1xf32>):
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[X]], %[[S]] : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[D:.*]] = graph.sub %[[M]], %[[C]] : tensor<2x3x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[H:.*]] = graph.cast %[[D]] : tensor<2x3x4xf32> -> tensor<2x3x4xf16>
// CHECK-NEXT: kernel.yield %[[D]], %[[H]] : tensor<2x3x4xf32>, tensor<2x3x4xf16>
// CHECK-NEXT: } -> tensor<2x3x4xf32>, tensor<2x3x4xf16>
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1
func.func @two_results(%x: tensor<2x3x4xf32>, %s: tensor<f32>, %c: tensor<3x1xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf16>) {
  %r:2 = kernel.fused_elementwise ins(%x, %s, %c : tensor<2x3x4xf32>, tensor<f32>, tensor<3x1xf32>) {
  ^bb0(%a: tensor<2x3x4xf32>, %b: tensor<f32>, %d: tensor<3x1xf32>):
    %m = graph.mul %a, %b : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x4xf32>
    %e = graph.sub %m, %d : tensor<2x3x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
    %h = graph.cast %e : tensor<2x3x4xf32> -> tensor<2x3x4xf16>
    kernel.yield %e, %h : tensor<2x3x4xf32>, tensor<2x3x4xf16>
  } -> tensor<2x3x4xf32>, tensor<2x3x4xf16>
  return %r#0, %r#1 : tensor<2x3x4xf32>, tensor<2x3x4xf16>
}

// -----

// Every elementwise op a loop can fuse (isFusableElementwise), in one body;
// a region argument can be yielded as it is.
// CHECK-LABEL: func.func @every_fusable_op(
// CHECK: kernel.fused_elementwise
// CHECK: graph.broadcast_to %{{.*}} : tensor<8xf32> -> tensor<4x8xf32>
// CHECK: graph.add
// CHECK: graph.sub
// CHECK: graph.mul
// CHECK: graph.div
// CHECK: graph.neg
// CHECK: graph.relu
// CHECK: graph.tanh
// CHECK: graph.sigmoid
// CHECK: graph.exp
// CHECK: graph.log
// CHECK: graph.sqrt
// CHECK: graph.rsqrt
// CHECK: graph.gelu %{{.*}} {approximate = "tanh"}
// CHECK: graph.pow %{{.*}} {exponent = 3.000000e+00 : f64}
// CHECK: graph.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: graph.relu_backward
// CHECK: graph.gelu_backward
// CHECK: kernel.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
// CHECK: } -> tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
func.func @every_fusable_op(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>) {
  %r:3 = kernel.fused_elementwise ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %0 = graph.broadcast_to %c : tensor<8xf32> -> tensor<4x8xf32>
    %1 = graph.add %a, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %2 = graph.sub %1, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %3 = graph.mul %2, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %4 = graph.div %3, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %5 = graph.neg %4 : tensor<4x8xf32>
    %6 = graph.relu %5 : tensor<4x8xf32>
    %7 = graph.tanh %6 : tensor<4x8xf32>
    %8 = graph.sigmoid %7 : tensor<4x8xf32>
    %9 = graph.exp %8 : tensor<4x8xf32>
    %10 = graph.log %9 : tensor<4x8xf32>
    %11 = graph.sqrt %10 : tensor<4x8xf32>
    %12 = graph.rsqrt %11 : tensor<4x8xf32>
    %13 = graph.gelu %12 {approximate = "tanh"} : tensor<4x8xf32>
    %14 = graph.pow %13 {exponent = 3.0} : tensor<4x8xf32>
    %15 = graph.cast %14 : tensor<4x8xf32> -> tensor<4x8xbf16>
    %16 = graph.relu_backward %a, %14 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %17 = graph.gelu_backward %a, %16 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    kernel.yield %17, %15, %a : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
  } -> tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
  return %r#0, %r#1, %r#2 : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
}

// -----

// The memory plan (kernel-plan-memory): an arena offset per result on each
// op, fused loops included, and the arena sizes on the function.
// CHECK-LABEL: func.func @memory_plan(
// CHECK-SAME: attributes {kernel.arena_size = 384 : i64, kernel.arena_size_no_reuse = 384 : i64}
// CHECK: graph.exp %{{.*}} {kernel.offsets = array<i64: 0>} : tensor<4x8xf32>
// CHECK: kernel.fused_elementwise
// CHECK: kernel.yield
// CHECK: } {kernel.offsets = array<i64: 128, 256>} -> tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: graph.reshape %{{.*}} {kernel.offsets = array<i64: -1>}
func.func @memory_plan(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<32xf32>) attributes {kernel.arena_size = 384 : i64, kernel.arena_size_no_reuse = 384 : i64} {
  %e = graph.exp %x {kernel.offsets = array<i64: 0>} : tensor<4x8xf32>
  %r:2 = kernel.fused_elementwise ins(%e : tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %n = graph.neg %a : tensor<4x8xf32>
    %t = graph.tanh %n : tensor<4x8xf32>
    kernel.yield %n, %t : tensor<4x8xf32>, tensor<4x8xf32>
  } {kernel.offsets = array<i64: 128, 256>} -> tensor<4x8xf32>, tensor<4x8xf32>
  %f = graph.reshape %r#1 {kernel.offsets = array<i64: -1>} : tensor<4x8xf32> -> tensor<32xf32>
  return %r#0, %f : tensor<4x8xf32>, tensor<32xf32>
}

// -----

// The residual add inside layer_norm (kernel-fuse-residual-norm): with and
// without the affine operands.
// CHECK-LABEL: func.func @add_layer_norm(
// CHECK: %{{.*}}, %{{.*}} = kernel.add_layer_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
// CHECK: kernel.add_layer_norm %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64} : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
func.func @add_layer_norm(%r: tensor<4x32xf32>, %d: tensor<4x32xbf16>, %w: tensor<32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xbf16>, tensor<4x32xf32>) {
  %s, %y = kernel.add_layer_norm %r, %d, %w, %b {eps = 1.0e-05} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
  %s2, %y2 = kernel.add_layer_norm %s, %r {eps = 1.0e-03} : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
  return %s2, %y, %y2 : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<4x32xf32>
}

// -----

// layer_norm_backward with the residual gradient added, with and without
// the half copy of the sum.
// CHECK-LABEL: func.func @layer_norm_backward_add(
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[H:.*]] = kernel.layer_norm_backward_add %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x32xbf16>
// CHECK: %[[DX:.*]], %[[DW:.*]], %{{.*}} = kernel.layer_norm_backward_add %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>{{$}}
// CHECK: return %[[H]], %[[DX]], %[[DW]]
func.func @layer_norm_backward_add(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %g: tensor<4x32xbf16>, %acc: tensor<4x32xf32>) -> (tensor<4x32xbf16>, tensor<4x32xf32>, tensor<32xf32>) {
  %dx, %dw, %db, %h = kernel.layer_norm_backward_add %x, %w, %g, %acc {eps = 1.0e-05} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x32xbf16>
  %dx2, %dw2, %db2 = kernel.layer_norm_backward_add %x, %w, %dx, %acc : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %h, %dx2, %dw2 : tensor<4x32xbf16>, tensor<4x32xf32>, tensor<32xf32>
}

// -----

// The RMS forms: no bias, an optional eps.
// CHECK-LABEL: func.func @rms(
// CHECK: kernel.add_rms_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
// CHECK: kernel.add_rms_norm %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
// CHECK: kernel.rms_norm_backward_add %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>
// CHECK: kernel.rms_norm_backward_add %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eps = {{.*}} : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>{{$}}
func.func @rms(%r: tensor<4x32xf32>, %d: tensor<4x32xbf16>, %w: tensor<32xf32>, %g: tensor<4x32xbf16>) -> (tensor<4x32xbf16>, tensor<4x32xf32>, tensor<4x32xbf16>, tensor<4x32xf32>) {
  %s, %y = kernel.add_rms_norm %r, %d, %w {eps = 1.0e-05} : tensor<4x32xf32>, tensor<4x32xbf16>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xbf16>
  %s2, %y2 = kernel.add_rms_norm %s, %r : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
  %dx, %dw, %h = kernel.rms_norm_backward_add %s, %w, %g, %r : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xbf16>
  %dx2, %dw2 = kernel.rms_norm_backward_add %s, %w, %dx, %r {eps = 2.0e-06} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>
  return %y, %y2, %h, %dx2 : tensor<4x32xbf16>, tensor<4x32xf32>, tensor<4x32xbf16>, tensor<4x32xf32>
}
