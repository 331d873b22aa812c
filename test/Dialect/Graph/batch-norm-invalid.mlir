// Verifier errors of graph.buffer and graph.batch_norm, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @stats_not_a_buffer {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  // expected-error @+1 {{running_mean must be a graph.buffer}}
  %y = graph.batch_norm %x, %w, %w, %w, %b : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %s = graph.reduce_sum %y : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @wrong_channels {
  %x = graph.input "x" : tensor<8x4x2x2xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "rm" init(#graph.zeros) : tensor<3xf32>
  %rv = graph.buffer "rv" init(#graph.ones) : tensor<4xf32>
  // expected-error @+2 {{batch_norm running_mean must be [4] (the channels of dimension 1), got [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.batch_norm %x, %rm, %rv, %w, %b : tensor<8x4x2x2xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x2x2xf32>
  %s = graph.reduce_sum %y : tensor<8x4x2x2xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @rank3 {
  %x = graph.input "x" : tensor<8x4x5xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "rm" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "rv" init(#graph.ones) : tensor<4xf32>
  // expected-error @+2 {{batch_norm needs x of rank 2 [N, C] or 4 [N, C, H, W], got rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.batch_norm %x, %rm, %rv, %w, %b : tensor<8x4x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x5xf32>
  %s = graph.reduce_sum %y : tensor<8x4x5xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @one_value_per_channel {
  %x = graph.input "x" : tensor<1x4xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "rm" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "rv" init(#graph.ones) : tensor<4xf32>
  // expected-error @+1 {{needs more than 1 value per channel, got 1}}
  %y = graph.batch_norm %x, %rm, %rv, %w, %b : tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4xf32>
  %s = graph.reduce_sum %y : tensor<1x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @bad_momentum {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<4xf32>
  %rm = graph.buffer "rm" init(#graph.zeros) : tensor<4xf32>
  %rv = graph.buffer "rv" init(#graph.ones) : tensor<4xf32>
  // expected-error @+2 {{batch_norm momentum must be in [0, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.batch_norm %x, %rm, %rv, %w, %b {momentum = 1.5} : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %s = graph.reduce_sum %y : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @buffer_random_init {
  %x = graph.input "x" : tensor<8x4xf32>
  // expected-error @+1 {{init must be #graph.zeros, #graph.ones or #graph.constant}}
  %rm = graph.buffer "rm" init(#graph.normal<std = 1.0>) : tensor<4xf32>
  %s = graph.reduce_sum %x : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @buffer_name_taken {
  %x = graph.input "x" : tensor<8x4xf32>
  // expected-note @+1 {{first defined here}}
  %w = graph.param "bn.weight" init(#graph.ones) : tensor<4xf32>
  // expected-error @+1 {{duplicate buffer name "bn.weight"}}
  %rm = graph.buffer "bn.weight" init(#graph.zeros) : tensor<4xf32>
  %s = graph.reduce_sum %x : tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

func.func @backward_weight_shape(%x: tensor<8x4xf32>, %w: tensor<3xf32>, %g: tensor<8x4xf32>) {
  // expected-error @+1 {{weight must be [4] of x's element type}}
  %dx, %dw, %db = graph.batch_norm_backward %x, %w, %g : tensor<8x4xf32>, tensor<3xf32>, tensor<8x4xf32> -> tensor<8x4xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

graph.model @groups_do_not_divide {
  %x = graph.input "x" : tensor<8x6x5xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<6xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<6xf32>
  // expected-error @+2 {{group_norm num_groups 4 must be >= 1 and divide the 6 channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.group_norm %x, %w, %b {num_groups = 4} : tensor<8x6x5xf32>, tensor<6xf32>, tensor<6xf32> -> tensor<8x6x5xf32>
  %s = graph.reduce_sum %y : tensor<8x6x5xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}

// -----

graph.model @group_norm_weight_shape {
  %x = graph.input "x" : tensor<8x6xf32>
  %w = graph.param "w" init(#graph.ones) : tensor<3xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<3xf32>
  // expected-error @+2 {{group_norm weight and bias must be [6] of x's element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.group_norm %x, %w, %b {num_groups = 3} : tensor<8x6xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<8x6xf32>
  %s = graph.reduce_sum %y : tensor<8x6xf32> -> tensor<f32>
  graph.output loss = %s : tensor<f32>
}
