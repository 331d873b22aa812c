// One 1024 x 1024 weight and nothing else: exactly 2^20 gradients, the most
// buckets --bucket-mb may make (test/e2e/bucket-mb.test).
graph.model @square {
  %x = graph.input "x" : tensor<4x1024xf32>
  %t = graph.input "t" : tensor<4x1024xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<1024x1024xf32>
  %y = graph.matmul %x, %w : tensor<4x1024xf32>, tensor<1024x1024xf32> -> tensor<4x1024xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x1024xf32>, tensor<4x1024xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
