// Verifier errors of scaled_dot_product_attention's grouped-query heads and
// masks (and of its backward), one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @heads_not_a_multiple {
  %q = graph.input "q" : tensor<2x6x16x8xf32>
  %k = graph.input "k" : tensor<2x4x16x8xf32>
  // expected-error @+2 {{scaled_dot_product_attention: q's 6 heads are not a multiple of k's and v's 4 (grouped-query attention)}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %k, %k : tensor<2x6x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x6x16x8xf32>
  %l = graph.reduce_sum %o : tensor<2x6x16x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @kv_heads_differ {
  %q = graph.input "q" : tensor<2x4x16x8xf32>
  %k = graph.input "k" : tensor<2x2x16x8xf32>
  %v = graph.input "v" : tensor<2x4x16x8xf32>
  // expected-error @+2 {{scaled_dot_product_attention shapes disagree: q [2, 4, 16, 8], k [2, 2, 16, 8], v [2, 4, 16, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %k, %v : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @mask_does_not_broadcast {
  %q = graph.input "q" : tensor<2x4x16x8xf32>
  %k = graph.input "k" : tensor<2x4x12x8xf32>
  %m = graph.input "m" : tensor<16x16xi64>
  // expected-error @+2 {{scaled_dot_product_attention: mask [16, 16] does not broadcast to [B, Hq, T, S] = [2, 4, 16, 12]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %k, %k mask %m : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<16x16xi64> -> tensor<2x4x16x8xf32>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @mask_rank_too_high {
  %q = graph.input "q" : tensor<2x4x16x8xf32>
  %m = graph.input "m" : tensor<1x2x4x16x16xi32>
  // expected-error @+2 {{scaled_dot_product_attention: mask [1, 2, 4, 16, 16] does not broadcast to [B, Hq, T, S] = [2, 4, 16, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %q, %q mask %m : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<1x2x4x16x16xi32> -> tensor<2x4x16x8xf32>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @float_mask_type {
  %q = graph.input "q" : tensor<2x4x16x8xf16>
  %m = graph.input "m" : tensor<16x16xf32>
  // expected-error @+2 {{scaled_dot_product_attention: a float mask must have q's element type f16, got f32 (insert a graph.cast, or use an integer keep-mask)}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %q, %q mask %m : tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<16x16xf32> -> tensor<2x4x16x8xf16>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xf16> -> tensor<f16>
  graph.output loss = %l : tensor<f16>
}

// -----

func.func @backward_mask(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>, %g: tensor<1x4x3x4xf32>, %m: tensor<3x4xi64>) {
  // expected-error @+1 {{'graph.scaled_dot_product_attention_backward' op scaled_dot_product_attention: mask [3, 4] does not broadcast to [B, Hq, T, S] = [1, 4, 3, 5]}}
  %0:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %g mask %m : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x4x3x4xf32>, tensor<3x4xi64> -> tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>
  return
}

// -----

func.func @backward_dk_shape(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>, %g: tensor<1x4x3x4xf32>) {
  // expected-error @+1 {{'graph.scaled_dot_product_attention_backward' op}}
  %0:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %g : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x4x3x4xf32> -> tensor<1x4x3x8xf32>, tensor<1x4x5x8xf32>, tensor<1x2x5x4xf32>
  return
}

// -----

graph.model @dropout_p_range {
  %q = graph.input "q" : tensor<2x4x16x8xf32>
  // expected-error @+2 {{scaled_dot_product_attention dropout_p must be in [0, 1), got 1.000000}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = graph.scaled_dot_product_attention %q, %q, %q {dropout_p = 1.0} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %l = graph.reduce_sum %o : tensor<2x4x16x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
