// Autocast of the resampling ops, as PyTorch's CUDA autocast: adaptive
// average pooling has no list entry (it runs in its input's type, here the
// fp16 conv result); upsample_nearest2d and upsample_bilinear2d are on the
// fp32 list (AT_FORALL_FP32 in ATen's autocast_mode.h).
// RUN: ampc-opt %s --graph-autocast | FileCheck %s
// RUN: ampc-opt %s --graph-autocast=mode=bf16 | FileCheck %s --check-prefix=BF16

// CHECK-LABEL: graph.model @resample
// CHECK: graph.conv2d {{.*}}amp.rule = "lower-list (conv)"{{.*}} -> tensor<2x4x5x5xf16>
// CHECK: graph.adaptive_avg_pool2d {{.*}}amp.precision = "fp16", amp.rule = "follows operand 0"{{.*}} : tensor<2x4x5x5xf16> -> tensor<2x4x2x2xf16>
// CHECK: graph.cast
// CHECK: graph.upsample_nearest2d {{.*}}amp.precision = "fp32", amp.rule = "fp32-list (upsample)"{{.*}} : tensor<2x4x5x5xf32> -> tensor<2x4x10x10xf32>
// BF16: graph.adaptive_avg_pool2d {{.*}}amp.precision = "bf16"{{.*}} -> tensor<2x4x2x2xbf16>
// BF16: graph.upsample_nearest2d {{.*}}amp.precision = "fp32"{{.*}} -> tensor<2x4x10x10xf32>
// CHECK: graph.upsample_bilinear2d {{.*}}amp.precision = "fp32", amp.rule = "fp32-list (upsample)"{{.*}} : tensor<2x4x5x5xf32> -> tensor<2x4x9x9xf32>
// BF16: graph.upsample_bilinear2d {{.*}}amp.precision = "fp32"{{.*}} -> tensor<2x4x9x9xf32>
graph.model @resample {
  %x = graph.input "x" : tensor<2x3x7x7xf32>
  %k = graph.param "k" init(#graph.normal<std = 0.1>) : tensor<4x3x3x3xf32>
  %h = graph.conv2d %x, %k : tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x5x5xf32>
  %p = graph.adaptive_avg_pool2d %h {output_size = array<i64: 2, 2>} : tensor<2x4x5x5xf32> -> tensor<2x4x2x2xf32>
  %u = graph.upsample_nearest2d %h {scales_h = 2.0, scales_w = 2.0} : tensor<2x4x5x5xf32> -> tensor<2x4x10x10xf32>
  %l1 = graph.reduce_sum %p : tensor<2x4x2x2xf32> -> tensor<f32>
  %b = graph.upsample_bilinear2d %h {size = array<i64: 9, 9>, align_corners = true} : tensor<2x4x5x5xf32> -> tensor<2x4x9x9xf32>
  %l2 = graph.reduce_sum %u : tensor<2x4x10x10xf32> -> tensor<f32>
  %l3 = graph.reduce_sum %b : tensor<2x4x9x9xf32> -> tensor<f32>
  %l12 = graph.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %l12, %l3 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
