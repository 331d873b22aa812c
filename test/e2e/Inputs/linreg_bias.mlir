// linreg.mlir plus a bias: y = x @ w + b, mean squared error. Under fp16
// autocast the matmul (and so w's gradient) runs in half precision, while
// the add promotes to FP32 (its widest input, b), so b's gradient stays in
// FP32: a loss scale too large for half overflows w's gradient only
// (overflow attribution, nonfinite.test). Zero-initialised.
graph.model @linreg_bias {
  %x = graph.input "x" : tensor<4x2xf32>
  %t = graph.input "t" : tensor<4x1xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x1xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<1xf32>
  %xw = graph.matmul %x, %w : tensor<4x2xf32>, tensor<2x1xf32> -> tensor<4x1xf32>
  %y = graph.add %xw, %b : tensor<4x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
