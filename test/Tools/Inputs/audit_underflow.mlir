// ampc audit: a loss so small that its fp16 gradients underflow without a
// loss scale. dloss/dh = 1e-3 / 32 = 3.1e-5 per element, below fp16's
// smallest normal (6.1e-5); 65536 times it is 2.05 (audit-loss-scale.test).
graph.model @tiny_loss {
  %x = graph.input "x" : tensor<8x16xf32>
  %w = graph.param "w" init(#graph.normal<std = 1.0>) : tensor<4x16xf32>
  %h = graph.linear %x, %w : tensor<8x16xf32>, tensor<4x16xf32> -> tensor<8x4xf32>
  %m = graph.reduce_mean %h {axes = array<i64: 0, 1>} : tensor<8x4xf32> -> tensor<f32>
  %c = graph.constant dense<1.0e-3> : tensor<f32>
  %loss = graph.mul %m, %c : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
