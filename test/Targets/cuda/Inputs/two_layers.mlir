// Two layers of the same shape: under autocast their weight casts (and the
// backward's) are the same kernel text.
graph.model @two {
  %x = graph.input "x" : tensor<4x8xf32>
  %w1 = graph.param "w1" init(#graph.normal<std = 0.1>) : tensor<8x8xf32>
  %w2 = graph.param "w2" init(#graph.normal<std = 0.1>) : tensor<8x8xf32>
  %h = graph.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %r = graph.relu %h : tensor<4x8xf32>
  %y = graph.matmul %r, %w2 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %l = graph.reduce_sum %y {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
