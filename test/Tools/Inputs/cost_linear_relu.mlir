// A linear layer whose bias add and ReLU fuse into one kernel
// (test/Tools/cost-fused.test).
graph.model @linrelu {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x3xf32>
  %w = graph.param "fc.weight" init(#graph.zeros) : tensor<3x8xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<3xf32>
  %h = graph.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %hb = graph.add %h, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %r = graph.relu %hb : tensor<4x3xf32>
  %loss = graph.mse_loss %r, %t : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
