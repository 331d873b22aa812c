// Linear regression without bias, y = x @ w, mean squared error: small, and
// its gradient is known in closed form (dw = x^T (2/4) (y - t)), so the AMP
// tests can state exact numbers. Zero-initialised.
graph.model @linreg {
  %x = graph.input "x" : tensor<4x2xf32>
  %t = graph.input "t" : tensor<4x1xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x1xf32>
  %y = graph.matmul %x, %w : tensor<4x2xf32>, tensor<2x1xf32> -> tensor<4x1xf32>
  %loss = graph.mse_loss %y, %t : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>
}
