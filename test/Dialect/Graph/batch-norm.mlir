// graph.buffer and graph.batch_norm (+ its backward) parse, verify, print
// and parse again (custom and generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @bn2d
graph.model @bn2d {
  %x = graph.input "x" : tensor<8x4x6x6xf16>
  %w = graph.param "bn.weight" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "bn.bias" init(#graph.zeros) : tensor<4xf32>
  // CHECK: graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  // CHECK: graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  %rv = graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  %wh = graph.cast %w : tensor<4xf32> -> tensor<4xf16>
  %bh = graph.cast %b : tensor<4xf32> -> tensor<4xf16>
  // Half input and affine, FP32 running statistics.
  // CHECK: graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64} : tensor<8x4x6x6xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf16> -> tensor<8x4x6x6xf16>
  %y = graph.batch_norm %x, %rm, %rv, %wh, %bh {eps = 1.0e-3, momentum = 0.2} : tensor<8x4x6x6xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf16> -> tensor<8x4x6x6xf16>
  %s = graph.reduce_sum %y : tensor<8x4x6x6xf16> -> tensor<f16>
  graph.output loss = %s : tensor<f16>
}

// -----

// CHECK-LABEL: graph.model @bn1d
graph.model @bn1d {
  %x = graph.input "x" : tensor<16x32xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<32xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<32xf32>
  %rm = graph.buffer "rm" init(#graph.constant<value = 0.5>) : tensor<32xf32>
  %rv = graph.buffer "rv" init(#graph.ones) : tensor<32xf32>
  // Defaults (eps 1e-5, momentum 0.1) print nothing.
  // CHECK: graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf32>
  %y = graph.batch_norm %x, %rm, %rv, %w, %b : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<16x32xf32>
  %s = graph.reduce_sum %y : tensor<16x32xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @bn_backward
func.func @bn_backward(%x: tensor<8x4x3x3xf32>, %w: tensor<4xf32>, %g: tensor<8x4x3x3xf32>) -> (tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: graph.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64} : tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<8x4x3x3xf32> -> tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
  %dx, %dw, %db = graph.batch_norm_backward %x, %w, %g {eps = 1.0e-3} : tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<8x4x3x3xf32> -> tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
  return %dx, %dw, %db : tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: graph.model @gn
graph.model @gn {
  %x = graph.input "x" : tensor<8x4x6xf32>
  %w = graph.param "gn.weight" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "gn.bias" init(#graph.zeros) : tensor<4xf32>
  // CHECK: graph.group_norm %{{.*}}, %{{.*}}, %{{.*}} {num_groups = 2 : i64} : tensor<8x4x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x6xf32>
  %y = graph.group_norm %x, %w, %b {num_groups = 2} : tensor<8x4x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x6xf32>
  %s = graph.reduce_sum %y : tensor<8x4x6xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @gn_backward
func.func @gn_backward(%x: tensor<2x4x3xf32>, %w: tensor<4xf32>, %g: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: graph.group_norm_backward %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64, num_groups = 4 : i64} : tensor<2x4x3xf32>, tensor<4xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>
  %dx, %dw, %db = graph.group_norm_backward %x, %w, %g {num_groups = 4, eps = 1.0e-3} : tensor<2x4x3xf32>, tensor<4xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>
  return %dx, %dw, %db : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>
}
