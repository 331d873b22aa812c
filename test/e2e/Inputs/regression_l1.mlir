// A regression MLP with silu trained on l1_loss + smooth_l1_loss
// (e2e/regression-losses.test).
graph.model @regression_l1 {
  %x = graph.input "x" : tensor<64x32xf32>
  %t = graph.input "t" : tensor<64x1xf32>
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<32x32xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<32xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<1x32xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<1xf32>
  %h = graph.linear %x, %w1, %b1 : tensor<64x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<64x32xf32>
  %a = graph.silu %h : tensor<64x32xf32>
  %p = graph.linear %a, %w2, %b2 : tensor<64x32xf32>, tensor<1x32xf32>, tensor<1xf32> -> tensor<64x1xf32>
  %l1 = graph.l1_loss %p, %t : tensor<64x1xf32>, tensor<64x1xf32> -> tensor<f32>
  %l2 = graph.smooth_l1_loss %p, %t {beta = 0.5} : tensor<64x1xf32>, tensor<64x1xf32> -> tensor<f32>
  %loss = graph.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, pred = %p : tensor<64x1xf32>
}
