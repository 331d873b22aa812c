// An MLP classifier trained on log_softmax + nll_loss, plus the other ops of
// issue 13's loss/indexing set on its logits: binary_cross_entropy_with_logits
// (pos_weight a parameter), cross_entropy with probability labels, argmax +
// gather and cumsum (e2e/loss-index.test).
graph.model @mlp_nll {
  %x = graph.input "image" : tensor<64x32xf32>
  %y = graph.input "label" : tensor<64xi64>
  %t = graph.input "target" : tensor<64x10xf32>
  %w1 = graph.param "fc1.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<32x32xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<32xf32>
  %w2 = graph.param "fc2.weight" init(#graph.kaiming_uniform<a = 2.23606797749979>) : tensor<10x32xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<10xf32>
  %pw = graph.param "pos_weight" init(#graph.ones) : tensor<10xf32>
  %h = graph.linear %x, %w1, %b1 : tensor<64x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<64x32xf32>
  %a = graph.relu %h : tensor<64x32xf32>
  %z = graph.linear %a, %w2, %b2 : tensor<64x32xf32>, tensor<10x32xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %lp = graph.log_softmax %z {axis = -1} : tensor<64x10xf32>
  %nll = graph.nll_loss %lp, %y : tensor<64x10xf32>, tensor<64xi64> -> tensor<f32>
  %p = graph.softmax %t {axis = -1} : tensor<64x10xf32>
  %soft = graph.cross_entropy %z, %p {label_smoothing = 0.1} : tensor<64x10xf32>, tensor<64x10xf32> -> tensor<f32>
  %bce = graph.binary_cross_entropy_with_logits %z, %p, %pw : tensor<64x10xf32>, tensor<64x10xf32>, tensor<10xf32> -> tensor<f32>
  %top = graph.argmax %z {axis = 1, keepdim = true} : tensor<64x10xf32> -> tensor<64x1xi64>
  %best = graph.gather %lp, %top {axis = 1} : tensor<64x10xf32>, tensor<64x1xi64> -> tensor<64x1xf32>
  %c = graph.cumsum %best {axis = 0} : tensor<64x1xf32>
  %cm = graph.reduce_mean %c : tensor<64x1xf32> -> tensor<f32>
  %k = graph.constant dense<-0.01> : tensor<f32>
  %ck = graph.mul %cm, %k : tensor<f32>, tensor<f32> -> tensor<f32>
  %l1 = graph.add %nll, %soft : tensor<f32>, tensor<f32> -> tensor<f32>
  %l2 = graph.add %bce, %ck : tensor<f32>, tensor<f32> -> tensor<f32>
  %loss = graph.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, top = %top : tensor<64x1xi64>
}
