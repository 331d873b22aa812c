// ampc audit against a direct computation (audit-numbers.test): exp pinned
// to fp16 on known inputs, weights from a safetensors file.
graph.model @numbers {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<8xf32>
  %h = graph.mul %x, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %e = graph.exp %h {precision = "fp16"} : tensor<4x8xf32>
  %loss = graph.reduce_mean %e {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
