// ampc audit: exp of large activations. x ~ N(0, 1) (synthetic) times 8
// exceeds log(65504) = 11.09 in about 8% of the values, so exp overflows
// fp16 there; it is safe in its default FP32 (audit-exp-overflow.test).
graph.model @expm {
  %x = graph.input "x" : tensor<16x32xf32>
  %w = graph.param "w" init(#graph.constant<value = 8.0>) : tensor<32xf32>
  %h = graph.mul %x, %w : tensor<16x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
  %e = graph.exp %h : tensor<16x32xf32>
  %loss = graph.reduce_mean %e {axes = array<i64: 0, 1>} : tensor<16x32xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
