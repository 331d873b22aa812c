// A model with a non-splat constant: the CUDA model copies it to the device
// once (DeviceModel's Constant table) and into the arena in each body.
graph.model @cst {
  %x = graph.input "x" : tensor<2x3xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x3xf32>
  %c = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %m = graph.mul %x, %w : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %a = graph.mul %m, %c : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_sum %a {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
