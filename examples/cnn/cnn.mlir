// Fashion-MNIST CNN: two conv(3x3, pad 1) + relu + max_pool(2) stages, then
// two linear layers. Batch 64, images 1x28x28.
graph.model @cnn {
  %image = graph.input "image" : tensor<64x1x28x28xf32>
  %label = graph.input "label" : tensor<64xi64>

  %c1w = graph.param "conv1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<16x1x3x3xf32>
  %c1b = graph.param "conv1.bias" init(#graph.zeros) : tensor<16xf32>
  %c2w = graph.param "conv2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<32x16x3x3xf32>
  %c2b = graph.param "conv2.bias" init(#graph.zeros) : tensor<32xf32>
  %f1w = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<128x1568xf32>
  %f1b = graph.param "fc1.bias" init(#graph.zeros) : tensor<128xf32>
  %f2w = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x128xf32>
  %f2b = graph.param "fc2.bias" init(#graph.zeros) : tensor<10xf32>

  %x1 = graph.conv2d %image, %c1w, %c1b {padding = array<i64: 1, 1>} : tensor<64x1x28x28xf32>, tensor<16x1x3x3xf32>, tensor<16xf32> -> tensor<64x16x28x28xf32>
  %r1 = graph.relu %x1 : tensor<64x16x28x28xf32>
  %p1 = graph.max_pool2d %r1 {kernel_size = array<i64: 2, 2>} : tensor<64x16x28x28xf32> -> tensor<64x16x14x14xf32>
  %x2 = graph.conv2d %p1, %c2w, %c2b {padding = array<i64: 1, 1>} : tensor<64x16x14x14xf32>, tensor<32x16x3x3xf32>, tensor<32xf32> -> tensor<64x32x14x14xf32>
  %r2 = graph.relu %x2 : tensor<64x32x14x14xf32>
  %p2 = graph.max_pool2d %r2 {kernel_size = array<i64: 2, 2>} : tensor<64x32x14x14xf32> -> tensor<64x32x7x7xf32>
  %flat = graph.reshape %p2 : tensor<64x32x7x7xf32> -> tensor<64x1568xf32>
  %h = graph.linear %flat, %f1w, %f1b : tensor<64x1568xf32>, tensor<128x1568xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %a = graph.relu %h : tensor<64x128xf32>
  %logits = graph.linear %a, %f2w, %f2b : tensor<64x128xf32>, tensor<10x128xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %loss = graph.cross_entropy %logits, %label : tensor<64x10xf32>, tensor<64xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, logits = %logits : tensor<64x10xf32>
}
