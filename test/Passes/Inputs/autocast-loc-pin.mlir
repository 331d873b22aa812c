// Model for the location pin in autocast-loc-pin.policy.
graph.model @locpin {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %a = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  // The pinned op:
  %b = graph.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %l = graph.reduce_sum %b : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
