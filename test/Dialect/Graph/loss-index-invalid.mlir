// Verifier errors of nll_loss, binary_cross_entropy_with_logits, cross_entropy
// with probability labels, argmax, gather and cumsum, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @nll_labels {
  %z = graph.input "z" : tensor<8x10xf32>
  %y = graph.input "y" : tensor<10xi64>
  // expected-error @+2 {{nll_loss labels [10] must be the input [8, 10] without the class axis (classes are last)}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.nll_loss %z, %y : tensor<8x10xf32>, tensor<10xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @nll_reduction {
  %z = graph.input "z" : tensor<8x10xf32>
  %y = graph.input "y" : tensor<8xi64>
  // expected-error @+2 {{nll_loss reduction must be "mean", "sum" or "none", got "avg"}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.nll_loss %z, %y {reduction = "avg"} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @nll_backward_g {
  %y = graph.input "y" : tensor<8xi64>
  %g = graph.input "g" : tensor<f32>
  // expected-error @+1 {{g must be [8], got []}}
  %d = graph.nll_loss_backward %y, %g {reduction = "none"} : tensor<8xi64>, tensor<f32> -> tensor<8x10xf32>
  %l = graph.reduce_sum %d : tensor<8x10xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bce_shapes {
  %x = graph.input "x" : tensor<8x4xf32>
  %t = graph.input "t" : tensor<8x1xf32>
  // expected-error @+2 {{binary_cross_entropy_with_logits input and target must share a type, got [8, 4] and [8, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.binary_cross_entropy_with_logits %x, %t : tensor<8x4xf32>, tensor<8x1xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bce_pos_weight {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.input "w" : tensor<8xf32>
  // expected-error @+2 {{binary_cross_entropy_with_logits pos_weight [8] must be [C] or [1] for the input [8, 4] (classes last), with its element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.binary_cross_entropy_with_logits %x, %x, %w : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @soft_ce_shape {
  %z = graph.input "z" : tensor<8x10xf32>
  %p = graph.input "p" : tensor<8x10xf16>
  // expected-error @+2 {{cross_entropy probability labels [8, 10] must have the logits' shape and element type [8, 10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.cross_entropy %z, %p : tensor<8x10xf32>, tensor<8x10xf16> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @argmax_axis {
  %x = graph.input "x" : tensor<4x10xf32>
  // expected-error @+2 {{argmax axis 2 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %a = graph.argmax %x {axis = 2} : tensor<4x10xf32> -> tensor<4xi64>
  %l = graph.reduce_sum %x : tensor<4x10xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @argmax_type {
  %x = graph.input "x" : tensor<4x10xf32>
  // expected-error @+1 {{result #0 must be tensor of 64-bit signless integer values, but got 'tensor<4xi32>'}}
  %a = graph.argmax %x {axis = 1} : tensor<4x10xf32> -> tensor<4xi32>
  %l = graph.reduce_sum %x : tensor<4x10xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @gather_index {
  %x = graph.input "x" : tensor<4x10xf32>
  %i = graph.input "i" : tensor<5x3xi64>
  // expected-error @+2 {{gather index [5, 3] must have the rank of the input [4, 10] and no larger sizes off the axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %g = graph.gather %x, %i {axis = 1} : tensor<4x10xf32>, tensor<5x3xi64> -> tensor<5x3xf32>
  %l = graph.reduce_sum %g : tensor<5x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @cumsum_axis {
  %x = graph.input "x" : tensor<4x10xf32>
  // expected-error @+1 {{cumsum axis -3 is out of range for a tensor of rank 2}}
  %c = graph.cumsum %x {axis = -3} : tensor<4x10xf32>
  %l = graph.reduce_sum %c : tensor<4x10xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
