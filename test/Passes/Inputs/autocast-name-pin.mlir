// Model for the name pin in autocast-name-pin.policy and the pins that
// match nothing in autocast-bad-pins.policy.
graph.model @namepin {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<8x8xf32>
  %a = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("attn_proj")
  %b = graph.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %c = graph.matmul %b, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("proj")
  %l = graph.reduce_sum %c : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
