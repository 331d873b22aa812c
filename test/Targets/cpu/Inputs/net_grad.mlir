// A small model with a hand-written @net_grad in the graph-autodiff
// contract, as autocast + autodiff would leave it for --amp=fp16 (the
// gradient math is simplified: the tests check the printing, not the
// calculus).
graph.model @net {
  %x = graph.input "image" : tensor<4x8xf32>
  %y = graph.input "label" : tensor<4xi64>
  %w = graph.param "fc.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<3x8xf32>
  %b = graph.param "fc.bias" init(#graph.zeros) : tensor<3xf32>
  %xh = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %wh = graph.cast %w : tensor<3x8xf32> -> tensor<3x8xf16>
  %bh = graph.cast %b : tensor<3xf32> -> tensor<3xf16>
  %h = graph.linear %xh, %wh : tensor<4x8xf16>, tensor<3x8xf16> -> tensor<4x3xf16>
  %hb = graph.add %h, %bh : tensor<4x3xf16>, tensor<3xf16> -> tensor<4x3xf16>
  %r = graph.relu %hb : tensor<4x3xf16>
  %d = graph.dropout %r {p = 0.1, key = 7} : tensor<4x3xf16>
  %z = graph.cast %d : tensor<4x3xf16> -> tensor<4x3xf32>
  %l = graph.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, logits = %z : tensor<4x3xf32>
}

func.func @net_grad(%x: tensor<4x8xf32> {graph.input = "image"}, %y: tensor<4xi64> {graph.input = "label"},
                    %w: tensor<3x8xf32> {graph.param = "fc.weight"}, %b: tensor<3xf32> {graph.param = "fc.bias"},
                    %s: tensor<f32> {graph.loss_scale})
    -> (tensor<f32> {graph.output = "loss"}, tensor<4x3xf32> {graph.output = "logits"},
        tensor<3x8xf32> {graph.grad = "fc.weight"}, tensor<3xf32> {graph.grad = "fc.bias"}) {
  %xh = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %wh = graph.cast %w : tensor<3x8xf32> -> tensor<3x8xf16>
  %bh = graph.cast %b : tensor<3xf32> -> tensor<3xf16>
  %h = graph.linear %xh, %wh : tensor<4x8xf16>, tensor<3x8xf16> -> tensor<4x3xf16>
  %hb = graph.add %h, %bh : tensor<4x3xf16>, tensor<3xf16> -> tensor<4x3xf16>
  %r = graph.relu %hb : tensor<4x3xf16>
  %d = graph.dropout %r {p = 0.1, key = 7} : tensor<4x3xf16>
  %z = graph.cast %d : tensor<4x3xf16> -> tensor<4x3xf32>
  %l = graph.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  // A layer norm with a weight and no bias (its value is unused).
  %n = graph.layer_norm %z, %b {eps = 1.0e-5} : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // "Backward": the scaled seed times the logits, through the cast.
  %g = graph.mul %z, %s : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %gh = graph.cast %g : tensor<4x3xf32> -> tensor<4x3xf16>
  %gt = graph.transpose %gh {perm = array<i64: 1, 0>} : tensor<4x3xf16> -> tensor<3x4xf16>
  %dwh = graph.matmul %gt, %xh : tensor<3x4xf16>, tensor<4x8xf16> -> tensor<3x8xf16>
  %dw = graph.cast %dwh : tensor<3x8xf16> -> tensor<3x8xf32>
  %db = graph.reduce_sum %g {axes = array<i64: 0>} : tensor<4x3xf32> -> tensor<3xf32>
  %db2 = graph.reshape %db : tensor<3xf32> -> tensor<1x3xf32>
  %db3 = graph.reshape %db2 : tensor<1x3xf32> -> tensor<3xf32>
  return %l, %z, %dw, %db3 : tensor<f32>, tensor<4x3xf32>, tensor<3x8xf32>, tensor<3xf32>
}
