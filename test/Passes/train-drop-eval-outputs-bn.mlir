// A batch_norm that only an evaluation output reads stays: in training it
// updates its running statistics whatever the loss reads (torch.nn.BatchNorm
// in train() mode). The softmax of the other output goes.
// RUN: ampc-opt %s --graph-autodiff --train-drop-eval-outputs | FileCheck %s --check-prefix=BN
// BN-LABEL: func.func @bn_grad(
// BN-NOT:   graph.output = "normed"
// BN-SAME:  -> (tensor<f32> {graph.output = "loss"}, tensor<4xf32> {graph.grad = "w"}, tensor<4xf32> {graph.grad = "bn.weight"}, tensor<4xf32> {graph.grad = "bn.bias"})
// BN:       graph.batch_norm
// BN-NOT:   graph.softmax
// BN:       return
graph.model @bn {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %g = graph.param "bn.weight" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "bn.bias" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "bn.running_mean" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "bn.running_var" init(#graph.ones) : tensor<4xf32>
  %y = graph.batch_norm %x, %rm, %rv, %g, %b : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %h = graph.mul %x, %w : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %p = graph.softmax %h {axis = 1} : tensor<8x4xf32>
  %l = graph.reduce_sum %h : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>, normed = %y : tensor<8x4xf32>, probs = %p : tensor<8x4xf32>
}
