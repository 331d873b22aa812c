// A transformer MLP: linear, tanh GELU, linear (test/Tools/cost-gemm-gelu.test).
graph.model @mlpgelu {
  %x = graph.input "x" : tensor<16x32xf32>
  %t = graph.input "t" : tensor<16x8xf32>
  %w1 = graph.param "fc1.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<64x32xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<64xf32>
  %w2 = graph.param "fc2.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<8x64xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<8xf32>
  %z = graph.linear %x, %w1, %b1 : tensor<16x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %h = graph.gelu %z {approximate = "tanh"} : tensor<16x64xf32>
  %y = graph.linear %h, %w2, %b2 : tensor<16x64xf32>, tensor<8x64xf32>, tensor<8xf32> -> tensor<16x8xf32>
  %loss = graph.mse_loss %y, %t : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
