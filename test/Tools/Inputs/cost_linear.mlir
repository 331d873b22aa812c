// One linear layer and an MSE loss: the cost tests work its bytes and FLOPs
// out by hand (test/Tools/cost-linear.test).
graph.model @lin {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x3xf32>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<3x8xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<3xf32>
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
