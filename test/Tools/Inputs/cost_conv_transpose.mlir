// A transposed convolution with a bias (cost-conv-transpose.test).
graph.model @up {
  %x = graph.input "x" : tensor<2x4x3x3xf32>
  %t = graph.input "t" : tensor<2x3x6x6xf32>
  %w = graph.param "w" init(#graph.normal<std = 0.1>) : tensor<4x3x3x3xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<3xf32>
  %y = graph.conv_transpose2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<2x3x6x6xf32>
  %l = graph.mse_loss %y, %t : tensor<2x3x6x6xf32>, tensor<2x3x6x6xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
