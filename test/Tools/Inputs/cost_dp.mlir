// Two linear layers whose parameters are all multiples of 64 floats: the
// data-parallel cost test works their buckets out by hand
// (test/Tools/cost-data-parallel.test).
graph.model @dp {
  %x = graph.input "x" : tensor<4x64xf32>
  %t = graph.input "t" : tensor<4x64xf32>
  %w1 = graph.param "fc1.weight" init(#graph.zeros) : tensor<64x64xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<64xf32>
  %w2 = graph.param "fc2.weight" init(#graph.zeros) : tensor<64x64xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<64xf32>
  %h = graph.linear %x, %w1, %b1 : tensor<4x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  %r = graph.relu %h : tensor<4x64xf32>
  %y = graph.linear %r, %w2, %b2 : tensor<4x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
