// Linear regression with a WRONG hand-written training step (the autodiff
// contract of docs/ARCHITECTURE.md): mse = mean((x w^T + b - y)^2), so
// dL/dp = 2 (p - y) / 8, dw = dp^T x, but the bias gradient is
// deliberately wrong: twice the true one. gradcheck must catch it.
graph.model @m {
  %x = graph.input "x" : tensor<4x3xf32>
  %y = graph.input "y" : tensor<4x2xf32>
  %w = graph.param "w" init(#graph.normal<std = 0.5>) : tensor<2x3xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<2xf32>
  %p = graph.linear %x, %w, %b : tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %l = graph.mse_loss %p, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

func.func @m_grad(%x: tensor<4x3xf32> {graph.input = "x"},
                  %y: tensor<4x2xf32> {graph.input = "y"},
                  %w: tensor<2x3xf32> {graph.param = "w"},
                  %b: tensor<2xf32> {graph.param = "b"},
                  %s: tensor<f32> {graph.loss_scale})
    -> (tensor<f32> {graph.output = "loss"},
        tensor<2x3xf32> {graph.grad = "w"}, tensor<2xf32> {graph.grad = "b"}) {
  %p = graph.linear %x, %w, %b : tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %l = graph.mse_loss %p, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<f32>
  %r = graph.sub %p, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %c = graph.constant dense<0.25> : tensor<f32>
  %cs = graph.mul %c, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  %dp = graph.mul %r, %cs : tensor<4x2xf32>, tensor<f32> -> tensor<4x2xf32>
  %dpt = graph.transpose %dp {perm = array<i64: 1, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
  %dw = graph.matmul %dpt, %x : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %db1 = graph.reduce_sum %dp {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>
  %db = graph.add %db1, %db1 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %l, %dw, %db : tensor<f32>, tensor<2x3xf32>, tensor<2xf32>
}
