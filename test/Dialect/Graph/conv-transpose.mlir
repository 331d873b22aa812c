// graph.conv_transpose2d parses, verifies, prints and parses again (custom
// and generic forms); default attributes are elided.
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @decoder
graph.model @decoder {
  %x = graph.input "x" : tensor<8x16x7x7xf32>
  %w = graph.param "up.weight" init(#graph.normal<std = 0.1>) : tensor<16x8x3x3xf32>
  %b = graph.param "up.bias" init(#graph.zeros) : tensor<8xf32>
  // CHECK: graph.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<8x16x7x7xf32>, tensor<16x8x3x3xf32>, tensor<8xf32> -> tensor<8x8x14x14xf32>
  %y = graph.conv_transpose2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : tensor<8x16x7x7xf32>, tensor<16x8x3x3xf32>, tensor<8xf32> -> tensor<8x8x14x14xf32>
  %s = graph.reduce_sum %y : tensor<8x8x14x14xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

// Groups, dilation, no bias, half precision; defaults print as nothing.
// CHECK-LABEL: graph.model @grouped
graph.model @grouped {
  %x = graph.input "x" : tensor<2x4x3x3xf16>
  %w = graph.param "w" init(#graph.normal<std = 0.1>) : tensor<4x3x3x2xf32>
  %wh = graph.cast %w : tensor<4x3x3x2xf32> -> tensor<4x3x3x2xf16>
  // CHECK: graph.conv_transpose2d %{{.*}}, %{{.*}} {dilation = array<i64: 1, 2>, groups = 2 : i64, output_padding = array<i64: 1, 0>, padding = array<i64: 1, 0>, stride = array<i64: 2, 1>} : tensor<2x4x3x3xf16>, tensor<4x3x3x2xf16> -> tensor<2x6x6x5xf16>
  %y = graph.conv_transpose2d %x, %wh {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, output_padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2} : tensor<2x4x3x3xf16>, tensor<4x3x3x2xf16> -> tensor<2x6x6x5xf16>
  // CHECK: graph.conv_transpose2d %{{.*}}, %{{.*}} : tensor<2x4x3x3xf16>, tensor<4x3x3x2xf16> -> tensor<2x3x5x4xf16>
  %z = graph.conv_transpose2d %x, %wh : tensor<2x4x3x3xf16>, tensor<4x3x3x2xf16> -> tensor<2x3x5x4xf16>
  %s = graph.reduce_sum %y : tensor<2x6x6x5xf16> -> tensor<f16>
  %t = graph.reduce_sum %z : tensor<2x3x5x4xf16> -> tensor<f16>
  %u = graph.add %s, %t : tensor<f16>, tensor<f16> -> tensor<f16>
  %l = graph.cast %u : tensor<f16> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
