// Verifier errors of the graph dialect, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @shape_mismatch {
  %a = graph.input "a" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<7x16xf32>
  // expected-error @+2 {{matmul contraction mismatch: [4, 8] x [7, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  %l = graph.reduce_sum %c : tensor<4x16xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @wrong_result_type {
  %a = graph.input "a" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<8x16xf32>
  // expected-error @+2 {{inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x17xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x17xf32>
  %l = graph.reduce_sum %c : tensor<4x17xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @integer_matmul {
  %a = graph.input "a" : tensor<4x8xi32>
  %b = graph.input "b" : tensor<8x16xf32>
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %c = graph.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %l = graph.reduce_sum %c : tensor<4x16xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @f64_tensor {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values}}
  %a = graph.input "a" : tensor<4xf64>
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @mixed_precision_add {
  %a = graph.input "a" : tensor<4xf16>
  %b = graph.input "b" : tensor<4xf32>
  // expected-error @+2 {{add operands must share an element type, got f16 and f32 (insert a graph.cast)}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.add %a, %b : tensor<4xf16>, tensor<4xf32> -> tensor<4xf32>
  %l = graph.reduce_sum %c : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @no_broadcast {
  %a = graph.input "a" : tensor<4x3xf32>
  %b = graph.input "b" : tensor<4xf32>
  // expected-error @+2 {{mul shapes [4, 3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.mul %a, %b : tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  %l = graph.reduce_sum %c : tensor<4x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bad_softmax_axis {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{axis 2 is out of range for a tensor of rank 2}}
  %c = graph.softmax %a {axis = 2} : tensor<4x3xf32>
  %l = graph.reduce_sum %c : tensor<4x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bad_reduce_axis {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+2 {{reduce_sum axis -3 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.reduce_sum %a {axes = array<i64: -3>} : tensor<4x3xf32> -> tensor<4xf32>
  %l = graph.reduce_sum %c : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @repeated_reduce_axis {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+2 {{reduce_mean reduces axis 1 twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.reduce_mean %a {axes = array<i64: 1, -1>} : tensor<4x3xf32> -> tensor<4xf32>
  %l = graph.reduce_sum %c : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bad_concat_axis {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+2 {{axis 5 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.concat %a, %a {axis = 5} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %l = graph.reduce_sum %c : tensor<8x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bad_concat_perm {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+2 {{concat perm [0, 0] is not a permutation of 2 axes}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.concat %a, %a {axis = 0, perm = array<i64: 0, 0>} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %l = graph.reduce_sum %c : tensor<8x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// With perm the inputs are compared transposed: [4,3] and [4,2] become
// [3,4] and [2,4], which differ off axis 1.
graph.model @concat_perm_shapes {
  %a = graph.input "a" : tensor<4x3xf32>
  %b = graph.input "b" : tensor<4x2xf32>
  // expected-error @+2 {{concat inputs [3, 4] and [2, 4] differ outside axis 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.concat %a, %b {axis = 1, perm = array<i64: 1, 0>} : tensor<4x3xf32>, tensor<4x2xf32> -> tensor<3x8xf32>
  %l = graph.reduce_sum %c : tensor<3x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// The result type must be the transposed join: [2+3, 4] along axis 0.
graph.model @concat_perm_result {
  %a = graph.input "a" : tensor<4x3xf32>
  %b = graph.input "b" : tensor<4x2xf32>
  // expected-error @+2 {{inferred type(s) 'tensor<5x4xf32>' are incompatible with return type(s) of operation 'tensor<4x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.concat %a, %b {axis = 0, perm = array<i64: 1, 0>} : tensor<4x3xf32>, tensor<4x2xf32> -> tensor<4x5xf32>
  %l = graph.reduce_sum %c : tensor<4x5xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @no_loss {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{model has no loss: name one output `loss`}}
  graph.output logits = %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{model has no loss}}
graph.model @implicit_terminator {
  %a = graph.input "a" : tensor<4xf32>
}

// -----

graph.model @vector_loss {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{the loss must be a scalar float tensor, got 'tensor<4xf32>'}}
  graph.output loss = %a : tensor<4xf32>
}

// -----

graph.model @duplicate_input {
  // expected-note @+1 {{first defined here}}
  %a = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{duplicate input name "x"}}
  %b = graph.input "x" : tensor<4xf32>
  %l = graph.reduce_sum %a : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @duplicate_param {
  // expected-note @+1 {{first defined here}}
  %a = graph.param "w" init(#graph.zeros) : tensor<4xf32>
  // expected-error @+1 {{duplicate parameter name "w"}}
  %b = graph.param "w" init(#graph.zeros) : tensor<4xf32>
  %l = graph.reduce_sum %a : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @input_and_param_share_a_name {
  // expected-note @+1 {{first defined here}}
  %a = graph.input "w" : tensor<4xf32>
  // expected-error @+1 {{duplicate parameter name "w"}}
  %b = graph.param "w" init(#graph.zeros) : tensor<4xf32>
  %l = graph.reduce_sum %a : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @duplicate_output {
  %a = graph.input "a" : tensor<f32>
  // expected-error @+1 {{duplicate output name "loss"}}
  graph.output loss = %a : tensor<f32>, loss = %a : tensor<f32>
}

// -----

graph.model @unknown_initializer {
  // expected-error @+1 {{init must be a #graph initializer}}
  %w = graph.param "w" init(1.0 : f32) : tensor<4xf32>
  %l = graph.reduce_sum %w : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @fans_of_a_vector {
  // expected-error @+1 {{fan-based initializer needs a tensor of rank >= 2}}
  %w = graph.param "w" init(#graph.xavier_uniform) : tensor<4xf32>
  %l = graph.reduce_sum %w : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @integer_param {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float values}}
  %w = graph.param "w" init(#graph.zeros) : tensor<4xi32>
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @bad_precision_pin {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{precision pin must be "fp32", "fp16", "bf16" or "half"}}
  %r = graph.relu %a {precision = "fp8"} : tensor<4xf32>
  %l = graph.reduce_sum %r : tensor<4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @linear_features {
  %x = graph.input "x" : tensor<2x5xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<3x4xf32>
  // expected-error @+2 {{linear input features 5 do not match weight [3, 4] (weight is [out, in])}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.linear %x, %w : tensor<2x5xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = graph.reduce_sum %y : tensor<2x3xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @conv_groups {
  %x = graph.input "x" : tensor<1x4x8x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<6x2x3x3xf32>
  // expected-error @+2 {{conv2d groups 3 must divide in channels 4 and out channels 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv2d %x, %w {groups = 3} : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x6x6xf32>
  %l = graph.reduce_sum %y : tensor<1x6x6x6xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @conv_channels {
  %x = graph.input "x" : tensor<1x3x8x8xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<6x2x3x3xf32>
  // expected-error @+2 {{conv2d weight [6, 2, 3, 3] expects 2 input channels, input [1, 3, 8, 8] has 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x6x6xf32>
  %l = graph.reduce_sum %y : tensor<1x6x6x6xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @pool_rank {
  %x = graph.input "x" : tensor<8x8xf32>
  // expected-error @+2 {{max_pool2d needs input [N, C, H, W], got [8, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<8x8xf32> -> tensor<4x4xf32>
  %l = graph.reduce_sum %y : tensor<4x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @reshape_count {
  %x = graph.input "x" : tensor<4x8xf32>
  // expected-error @+1 {{cannot reshape [4, 8] (32 elements) to [30] (30 elements)}}
  %y = graph.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  %l = graph.reduce_sum %y : tensor<30xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @transpose_perm {
  %x = graph.input "x" : tensor<4x8xf32>
  // expected-error @+2 {{transpose perm [0, 0] is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.transpose %x {perm = array<i64: 0, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
  %l = graph.reduce_sum %y : tensor<4x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @slice_bounds {
  %x = graph.input "x" : tensor<4x8xf32>
  // expected-error @+2 {{slice dimension 1: need 0 <= start (2) <= limit (9) <= size (8) and stride >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 9>} : tensor<4x8xf32> -> tensor<4x7xf32>
  %l = graph.reduce_sum %y : tensor<4x7xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @cross_entropy_labels {
  %z = graph.input "z" : tensor<8x10xf32>
  %y = graph.input "y" : tensor<10xi64>
  // expected-error @+2 {{cross_entropy labels [10] must be logits [8, 10] without the class axis (classes are last)}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.cross_entropy %z, %y : tensor<8x10xf32>, tensor<10xi64> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @float_labels {
  %z = graph.input "z" : tensor<8x10xf32>
  %y = graph.input "y" : tensor<8xf32>
  // Float labels are class probabilities: they need the logits' shape.
  // expected-error @+2 {{cross_entropy probability labels [8] must have the logits' shape and element type [8, 10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.cross_entropy %z, %y : tensor<8x10xf32>, tensor<8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @attention_shapes {
  %q = graph.input "q" : tensor<2x4x16x8xf32>
  %k = graph.input "k" : tensor<2x4x16x4xf32>
  // expected-error @+2 {{scaled_dot_product_attention shapes disagree: q [2, 4, 16, 8], k [2, 4, 16, 4], v [2, 4, 16, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %k, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>, tensor<2x4x16x4xf32> -> tensor<2x4x16x4xf32>
  %l = graph.reduce_sum %o : tensor<2x4x16x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @layer_norm_weight {
  %x = graph.input "x" : tensor<2x8xf32>
  %g = graph.param "g" init(#graph.ones) : tensor<4xf32>
  // expected-error @+2 {{layer_norm weight must be [8], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.layer_norm %x, %g : tensor<2x8xf32>, tensor<4xf32> -> tensor<2x8xf32>
  %l = graph.reduce_sum %y : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @dropout_p {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{p must be in [0, 1), got 1}}
  %y = graph.dropout %x {p = 1.0} : tensor<2x8xf32>
  %l = graph.reduce_sum %y : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @gelu_mode {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %y = graph.gelu %x {approximate = "erf"} : tensor<2x8xf32>
  %l = graph.reduce_sum %y : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @cast_shape {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{changes the shape [2, 8] -> [16]; a cast only changes the element type}}
  %y = graph.cast %x : tensor<2x8xf32> -> tensor<16xf16>
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @kaiming_mode {
  // expected-error @+1 {{kaiming mode must be "fan_in" or "fan_out", got "fan_avg"}}
  %w = graph.param "w" init(#graph.kaiming_uniform<mode = "fan_avg">) : tensor<4x4xf32>
  %l = graph.reduce_sum %w : tensor<4x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @negative_std {
  // expected-error @+1 {{normal initializer needs a finite std > 0}}
  %w = graph.param "w" init(#graph.normal<std = -1.0>) : tensor<4x4xf32>
  %l = graph.reduce_sum %w : tensor<4x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @unknown_initializer_name {
  // expected-error @+1 {{unknown attribute `glorot` in dialect `graph`}}
  %w = graph.param "w" init(#graph.glorot) : tensor<4x4xf32>
  %l = graph.reduce_sum %w : tensor<4x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

func.func @input_outside_a_model() {
  // expected-error @+1 {{'graph.input' op expects parent op 'graph.model'}}
  %a = graph.input "a" : tensor<4xf32>
  return
}

// -----

graph.model @layer_norm_bias_without_weight {
  %x = graph.input "x" : tensor<2x8xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<8xf32>
  // expected-error @+2 {{layer_norm with a bias needs a weight}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = "graph.layer_norm"(%x, %b) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %l = graph.reduce_sum %y : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @clamp_no_bound {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{needs a min or a max attribute (or both)}}
  %y = graph.clamp %x : tensor<2x8xf32>
  %l = graph.reduce_sum %y : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @softplus_beta {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{beta must be nonzero}}
  %y = graph.softplus %x {beta = 0.0} : tensor<2x8xf32>
  %l = graph.reduce_sum %y : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @maximum_broadcast {
  %x = graph.input "x" : tensor<2x8xf32>
  %y = graph.input "y" : tensor<3xf32>
  // expected-error @+2 {{maximum shapes [2, 8] and [3] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %z = graph.maximum %x, %y : tensor<2x8xf32>, tensor<3xf32> -> tensor<2x8xf32>
  %l = graph.reduce_sum %z : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @minimum_types {
  %x = graph.input "x" : tensor<2x8xf32>
  %y = graph.input "y" : tensor<8xf16>
  // expected-error @+2 {{minimum operands must share an element type, got f32 and f16 (insert a graph.cast)}}
  // expected-error @+1 {{failed to infer returned types}}
  %z = graph.minimum %x, %y : tensor<2x8xf32>, tensor<8xf16> -> tensor<2x8xf32>
  %l = graph.reduce_sum %z : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @silu_type {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "graph.silu"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf16>
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @where_condition_shape {
  %x = graph.input "x" : tensor<2x8xf32>
  %c = graph.input "c" : tensor<3xi64>
  // expected-error @+2 {{where condition shape [3] does not broadcast with [2, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %z = graph.where %c, %x, %x : tensor<3xi64>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %l = graph.reduce_sum %z : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @where_float_condition {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %z = graph.where %x, %x, %x : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %l = graph.reduce_sum %z : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @where_types {
  %x = graph.input "x" : tensor<2x8xf32>
  %y = graph.input "y" : tensor<2x8xbf16>
  %c = graph.input "c" : tensor<2x8xi64>
  // expected-error @+2 {{where operands must share an element type, got f32 and bf16 (insert a graph.cast)}}
  // expected-error @+1 {{failed to infer returned types}}
  %z = graph.where %c, %x, %y : tensor<2x8xi64>, tensor<2x8xf32>, tensor<2x8xbf16> -> tensor<2x8xf32>
  %l = graph.reduce_sum %z : tensor<2x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @masked_fill_grows {
  %x = graph.input "x" : tensor<8xf32>
  %m = graph.input "m" : tensor<2x8xi64>
  // expected-error @+2 {{masked_fill mask shape [2, 8] does not broadcast to the input's [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %z = graph.masked_fill %x, %m {value = 0.0} : tensor<8xf32>, tensor<2x8xi64> -> tensor<8xf32>
  %l = graph.reduce_sum %z : tensor<8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @l1_reduction {
  %p = graph.input "p" : tensor<8x4xf32>
  // expected-error @+2 {{l1_loss reduction must be "mean", "sum" or "none", got "max"}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.l1_loss %p, %p {reduction = "max"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @huber_delta {
  %p = graph.input "p" : tensor<8x4xf32>
  // expected-error @+2 {{huber_loss delta must be > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.huber_loss %p, %p {delta = 0.0} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @smooth_l1_beta {
  %p = graph.input "p" : tensor<8x4xf32>
  // expected-error @+2 {{smooth_l1_loss beta must be >= 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.smooth_l1_loss %p, %p {beta = -1.0} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @l1_shapes {
  %p = graph.input "p" : tensor<8x4xf32>
  %t = graph.input "t" : tensor<8x1xf32>
  // expected-error @+2 {{l1_loss shapes differ: [8, 4] and [8, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.l1_loss %p, %t : tensor<8x4xf32>, tensor<8x1xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @huber_none_type {
  %p = graph.input "p" : tensor<8x4xf32>
  // expected-error @+2 {{inferred type(s) 'tensor<8x4xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %l = graph.huber_loss %p, %p {reduction = "none"} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
