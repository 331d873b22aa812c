// A small CNN with nearest upsampling (a float scale pair), bilinear
// upsampling (align_corners to a size) added to it, bilinear downsampling
// by a float scale, and uneven adaptive average pooling for
// test/e2e/resample.test: 32 images 1x6x6, 10 classes.
graph.model @cnn_resample {
  %image = graph.input "image" : tensor<32x1x6x6xf32>
  %label = graph.input "label" : tensor<32xi64>

  %cw = graph.param "conv.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<4x1x3x3xf32>
  %cb = graph.param "conv.bias" init(#graph.zeros) : tensor<4xf32>
  %fw = graph.param "fc.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x24xf32>
  %fb = graph.param "fc.bias" init(#graph.zeros) : tensor<10xf32>

  %c = graph.conv2d %image, %cw, %cb {padding = array<i64: 1, 1>} : tensor<32x1x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<32x4x6x6xf32>
  %r = graph.relu %c : tensor<32x4x6x6xf32>
  %u = graph.upsample_nearest2d %r {scales_h = 1.5, scales_w = 1.5} : tensor<32x4x6x6xf32> -> tensor<32x4x9x9xf32>
  %b = graph.upsample_bilinear2d %r {size = array<i64: 9, 9>, align_corners = true} : tensor<32x4x6x6xf32> -> tensor<32x4x9x9xf32>
  %ub = graph.add %u, %b : tensor<32x4x9x9xf32>, tensor<32x4x9x9xf32> -> tensor<32x4x9x9xf32>
  %h = graph.upsample_bilinear2d %ub {scales_h = 0.8, scales_w = 0.8} : tensor<32x4x9x9xf32> -> tensor<32x4x7x7xf32>
  %p = graph.adaptive_avg_pool2d %h {output_size = array<i64: 2, 3>} : tensor<32x4x7x7xf32> -> tensor<32x4x2x3xf32>
  %flat = graph.reshape %p : tensor<32x4x2x3xf32> -> tensor<32x24xf32>
  %logits = graph.linear %flat, %fw, %fb : tensor<32x24xf32>, tensor<10x24xf32>, tensor<10xf32> -> tensor<32x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<32x10xf32>, tensor<32xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<32x10xf32>
}
