// graph.adaptive_avg_pool2d, graph.upsample_nearest2d,
// graph.upsample_bilinear2d and their backward ops
// parse, infer their result types, verify, print and parse again (custom and
// generic forms).
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @resample
graph.model @resample {
  %x = graph.input "x" : tensor<2x4x5x7xf32>
  // CHECK: graph.adaptive_avg_pool2d %{{.*}} {output_size = array<i64: 3, 4>} : tensor<2x4x5x7xf32> -> tensor<2x4x3x4xf32>
  %a = graph.adaptive_avg_pool2d %x {output_size = array<i64: 3, 4>} : tensor<2x4x5x7xf32> -> tensor<2x4x3x4xf32>
  // CHECK: graph.adaptive_avg_pool2d %{{.*}} {output_size = array<i64: 1, 1>} : tensor<2x4x5x7xf32> -> tensor<2x4x1x1xf32>
  %g = graph.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<2x4x5x7xf32> -> tensor<2x4x1x1xf32>
  // floor(5 * 1.5) = 7, floor(7 * 2.5) = 17.
  // CHECK: graph.upsample_nearest2d %{{.*}} {scales_h = 1.500000e+00 : f64, scales_w = 2.500000e+00 : f64} : tensor<2x4x5x7xf32> -> tensor<2x4x7x17xf32>
  %u = graph.upsample_nearest2d %x {scales_h = 1.5, scales_w = 2.5} : tensor<2x4x5x7xf32> -> tensor<2x4x7x17xf32>
  // CHECK: graph.upsample_nearest2d %{{.*}} {size = array<i64: 10, 3>} : tensor<2x4x5x7xf32> -> tensor<2x4x10x3xf32>
  %s = graph.upsample_nearest2d %x {size = array<i64: 10, 3>} : tensor<2x4x5x7xf32> -> tensor<2x4x10x3xf32>
  // CHECK: graph.upsample_bilinear2d %{{.*}} {scales_h = 1.500000e+00 : f64, scales_w = 2.500000e+00 : f64} : tensor<2x4x5x7xf32> -> tensor<2x4x7x17xf32>
  %b = graph.upsample_bilinear2d %x {scales_h = 1.5, scales_w = 2.5} : tensor<2x4x5x7xf32> -> tensor<2x4x7x17xf32>
  // CHECK: graph.upsample_bilinear2d %{{.*}} {align_corners = true, size = array<i64: 10, 3>} : tensor<2x4x5x7xf32> -> tensor<2x4x10x3xf32>
  %c = graph.upsample_bilinear2d %x {size = array<i64: 10, 3>, align_corners = true} : tensor<2x4x5x7xf32> -> tensor<2x4x10x3xf32>
  %l = graph.reduce_sum %s : tensor<2x4x10x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @backward
func.func @backward(%ga: tensor<2x4x3x4xf32>, %gu: tensor<2x4x7x17xf32>) {
  // CHECK: graph.adaptive_avg_pool2d_backward %{{.*}} : tensor<2x4x3x4xf32> -> tensor<2x4x5x7xf32>
  %0 = graph.adaptive_avg_pool2d_backward %ga : tensor<2x4x3x4xf32> -> tensor<2x4x5x7xf32>
  // CHECK: graph.upsample_nearest2d_backward %{{.*}} {scales_h = 1.500000e+00 : f64, scales_w = 2.500000e+00 : f64} : tensor<2x4x7x17xf32> -> tensor<2x4x5x7xf32>
  %1 = graph.upsample_nearest2d_backward %gu {scales_h = 1.5, scales_w = 2.5} : tensor<2x4x7x17xf32> -> tensor<2x4x5x7xf32>
  // CHECK: graph.upsample_bilinear2d_backward %{{.*}} {align_corners = true, scales_h = 1.500000e+00 : f64, scales_w = 2.500000e+00 : f64} : tensor<2x4x7x17xf32> -> tensor<2x4x5x7xf32>
  %2 = graph.upsample_bilinear2d_backward %gu {scales_h = 1.5, scales_w = 2.5, align_corners = true} : tensor<2x4x7x17xf32> -> tensor<2x4x5x7xf32>
  return
}
