// Autocast of conv_transpose2d: PyTorch's CUDA lower-precision list
// (AT_FORALL_LOWER_PRECISION_FP has conv_transpose2d), so it runs in the half
// type with its weight and bias cast, as conv2d does.
// RUN: ampc-opt %s --graph-autocast | FileCheck %s
// RUN: ampc-opt %s --graph-autocast=mode=bf16 | FileCheck %s --check-prefix=BF16

// CHECK-LABEL: graph.model @decoder
// CHECK-DAG:   graph.cast %{{.*}} : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf16>
// CHECK-DAG:   graph.cast %{{.*}} : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf16>
// CHECK-DAG:   graph.cast %{{.*}} : tensor<3xf32> -> tensor<3xf16>
// CHECK:       graph.conv_transpose2d {{.*}}amp.precision = "fp16", amp.rule = "lower-list (conv)"{{.*}} : tensor<2x4x3x3xf16>, tensor<4x3x3x3xf16>, tensor<3xf16> -> tensor<2x3x6x6xf16>
// BF16:        graph.conv_transpose2d {{.*}}amp.precision = "bf16", amp.rule = "lower-list (conv)"{{.*}} -> tensor<2x3x6x6xbf16>
graph.model @decoder {
  %x = graph.input "x" : tensor<2x4x3x3xf32>
  %w = graph.param "w" init(#graph.normal<std = 0.1>) : tensor<4x3x3x3xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<3xf32>
  %y = graph.conv_transpose2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<2x3x6x6xf32>
  %l = graph.reduce_sum %y : tensor<2x3x6x6xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
